package auth

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// realm is the RFC 6750 realm of every WWW-Authenticate challenge.
const realm = "lookup"

// bearerToken extracts the token of an "Authorization: Bearer" header. It
// returns present=false when no bearer credentials were sent (no header,
// or another scheme), and a tokenError when the header is unusable.
func bearerToken(r *http.Request) (token string, present bool, err error) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", true, errTokenHeaders
	}
	scheme, rest, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, nil
	}
	token = strings.TrimSpace(rest)
	if token == "" {
		return "", true, errTokenEmpty
	}
	return token, true, nil
}

// challenge builds an RFC 6750 WWW-Authenticate value. errCode and desc
// are fixed strings without quotes; scope is added when non-empty.
func challenge(errCode, desc, scope string) string {
	var b strings.Builder
	b.WriteString(`Bearer realm="` + realm + `"`)
	if errCode != "" {
		b.WriteString(`, error="` + errCode + `"`)
	}
	if desc != "" {
		b.WriteString(`, error_description="` + desc + `"`)
	}
	if scope != "" {
		b.WriteString(`, scope="` + scope + `"`)
	}
	return b.String()
}

// refuseToken answers the 401 of a refused token. A request that cannot
// be judged because its context ended is not a refusal: it goes to
// internalError (a client gone away is logged as 499, nothing answered).
func refuseToken(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		internalError(w, r, err)
		return
	}
	desc := errTokenSignature.Error()
	var te tokenError
	if errors.As(err, &te) {
		desc = te.Error()
	}
	code := "invalid_token"
	if errors.Is(err, errTokenEmpty) || errors.Is(err, errTokenHeaders) {
		code = "invalid_request"
	}
	w.Header().Set("WWW-Authenticate", challenge(code, desc, ""))
	writeProblem(w, r, probUnauthorized, "The bearer token was refused: "+desc+".")
}

// bearerPrincipal returns the principal of r's bearer token, verified by
// v; without a token, or with one v refuses, it has answered the 401 (with
// its WWW-Authenticate challenge) and returns nil.
func bearerPrincipal(v *tokenVerifier, w http.ResponseWriter, r *http.Request) *principal {
	raw, present, err := bearerToken(r)
	if !present {
		w.Header().Set("WWW-Authenticate", challenge("", "", ""))
		writeProblem(w, r, probUnauthorized, "A bearer token is required.")
		return nil
	}
	var p *principal
	if err == nil {
		p, err = v.verify(r.Context(), raw)
	}
	if err != nil {
		refuseToken(w, r, err)
		return nil
	}
	return p
}
