package query

import (
	"context"
	"errors"
	"net/http"
	"net/url"
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

// asksFullSSN reports whether any ssn_mode value of r's raw query is
// FULL. It reads the raw values, before parameter validation, so that the
// scope check answers before the parameters are judged.
func asksFullSSN(r *http.Request) bool {
	raw := r.URL.RawQuery
	if !strings.Contains(raw, ssnFull) && !strings.Contains(raw, "%") {
		return false // no FULL, not even percent-encoded
	}
	// ParseQuery keeps every pair it could decode, even on error.
	vals, _ := url.ParseQuery(raw)
	for _, v := range vals["ssn_mode"] {
		if v == ssnFull {
			return true
		}
	}
	return false
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
	writeProblem(w, r, probUnauthorized, "The bearer token was refused: "+desc+".", nil)
}

// bearerPrincipal returns the principal of r's bearer token, verified by
// v; without a token, or with one v refuses, it has answered the 401 (with
// its WWW-Authenticate challenge) and returns nil.
func bearerPrincipal(v *tokenVerifier, w http.ResponseWriter, r *http.Request) *principal {
	raw, present, err := bearerToken(r)
	if !present {
		w.Header().Set("WWW-Authenticate", challenge("", "", ""))
		writeProblem(w, r, probUnauthorized, "A bearer token is required.", nil)
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

// authenticate returns the middleware that refuses requests without a
// valid token (401), without scope read:persons (403), when tenancy is on
// without the tenancy claim (403), and, when needsSSN is not nil and
// reports true for the request, without scope read:persons:ssn (403). It
// stores the principal in the request context.
func (s *Server) authenticate(needsSSN func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := bearerPrincipal(s.verifier, w, r)
			if p == nil {
				return
			}
			if info := infoFrom(r.Context()); info != nil {
				info.subject = p.subject
			}
			if !p.hasScope(scopeRead) {
				w.Header().Set("WWW-Authenticate", challenge("insufficient_scope", "scope read:persons is required", scopeRead))
				writeProblem(w, r, probInsufficientScope, "The token lacks scope "+scopeRead+".", nil)
				return
			}
			if s.verifier.tenantClaim != "" {
				switch p.tenancy {
				case tenancyAbsent:
					writeProblem(w, r, probForbidden, "The token carries no tenancy claim.", nil)
					return
				case tenancyMalformed:
					writeProblem(w, r, probForbidden, "The token's tenancy claim is malformed: it must be an array of business id strings.", nil)
					return
				}
			}
			if needsSSN != nil && !p.hasScope(scopeSSN) && needsSSN(r) {
				w.Header().Set("WWW-Authenticate", challenge("insufficient_scope",
					"scope read:persons:ssn is required for ssn_mode FULL", scopeRead+" "+scopeSSN))
				writeProblem(w, r, probInsufficientScope, "ssn_mode=FULL needs scope "+scopeSSN+".", nil)
				return
			}
			next.ServeHTTP(w, withPrincipal(r, p))
		})
	}
}
