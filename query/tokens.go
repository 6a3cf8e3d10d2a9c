package query

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// The scopes the API knows (README.md, "The API and the events").
const (
	scopeRead = "read:persons"
	scopeSSN  = "read:persons:ssn"
)

// TokenVerifier is what the API needs of token verification: it judges
// the bearer credentials of a request. The API holds no key and checks no
// signature; cmd/lookupd gives NewServer internal/auth's Verifier.
type TokenVerifier interface {
	// VerifyBearer judges r's Authorization header. It returns the
	// principal of a valid bearer token; nil and a nil error when r
	// carries no bearer credentials (no header, or another scheme);
	// else an error: a refusal when it has a method
	// TokenRefusal() (desc string, invalidRequest bool) (answered 401
	// with desc as the RFC 6750 error_description, and
	// error="invalid_request" rather than "invalid_token" when
	// invalidRequest), anything else when the token could not be judged
	// (r's context ended: answered as an internal error).
	VerifyBearer(r *http.Request) (Principal, error)
}

// Principal is what a verified token says about its bearer. It is an
// alias of an interface literal, so that a TokenVerifier implements it
// without importing this package. A principal is shared by concurrent
// requests: it must not change once made.
type Principal = interface {
	Subject() string            // the token's sub
	Client() string             // azp, else client_id: recorded by the Auditor
	HasScope(scope string) bool // the scope claim (scope or scp) holds it
	// TenancyOn reports whether the verifier reads a tenancy claim
	// (query then checks it on every resource).
	TenancyOn() bool
	// TenancyClaim reports whether the claim is there, and whether it is
	// an array of business id strings.
	TenancyClaim() (present, wellFormed bool)
	Tenants() []string                // the claim's business ids, lower-cased
	MayAccess(businessID string) bool // the claim holds businessID (any case)
}

// tokenRefusal is the error of a TokenVerifier that refused a token.
type tokenRefusal interface {
	error
	TokenRefusal() (desc string, invalidRequest bool)
}

// realm is the RFC 6750 realm of every WWW-Authenticate challenge.
const realm = "lookup"

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

// bearerPrincipal returns the principal of r's bearer token, judged by
// v; without a token, or with one v refuses, it has answered the 401 (with
// its WWW-Authenticate challenge) and returns nil. A request that cannot
// be judged because its context ended is not a refusal: it goes to
// internalError (a client gone away is logged as 499, nothing answered).
func bearerPrincipal(v TokenVerifier, w http.ResponseWriter, r *http.Request) Principal {
	p, err := v.VerifyBearer(r)
	if err != nil {
		var refused tokenRefusal
		if !errors.As(err, &refused) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			internalError(w, r, err)
			return nil
		}
		desc, invalidRequest := refused.TokenRefusal()
		code := "invalid_token"
		if invalidRequest {
			code = "invalid_request"
		}
		w.Header().Set("WWW-Authenticate", challenge(code, desc, ""))
		writeProblem(w, r, probUnauthorized, "The bearer token was refused: "+desc+".", nil)
		return nil
	}
	if p == nil {
		w.Header().Set("WWW-Authenticate", challenge("", "", ""))
		writeProblem(w, r, probUnauthorized, "A bearer token is required.", nil)
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
			p := bearerPrincipal(s.tokens, w, r)
			if p == nil {
				return
			}
			if info := infoFrom(r.Context()); info != nil {
				info.subject = p.Subject()
			}
			if !p.HasScope(scopeRead) {
				w.Header().Set("WWW-Authenticate", challenge("insufficient_scope", "scope read:persons is required", scopeRead))
				writeProblem(w, r, probInsufficientScope, "The token lacks scope "+scopeRead+".", nil)
				return
			}
			if p.TenancyOn() {
				switch present, wellFormed := p.TenancyClaim(); {
				case !present:
					writeProblem(w, r, probForbidden, "The token carries no tenancy claim.", nil)
					return
				case !wellFormed:
					writeProblem(w, r, probForbidden, "The token's tenancy claim is malformed: it must be an array of business id strings.", nil)
					return
				}
			}
			if needsSSN != nil && !p.HasScope(scopeSSN) && needsSSN(r) {
				w.Header().Set("WWW-Authenticate", challenge("insufficient_scope",
					"scope read:persons:ssn is required for ssn_mode FULL", scopeRead+" "+scopeSSN))
				writeProblem(w, r, probInsufficientScope, "ssn_mode=FULL needs scope "+scopeSSN+".", nil)
				return
			}
			next.ServeHTTP(w, withPrincipal(r, p))
		})
	}
}
