package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Authenticator admits the requests of another HTTP service that bear a
// token the API would accept and a scope of that service's own (lookupd
// audit serve: read:audit). It verifies tokens with the API's verifier
// and the API's token cache (the same checks: signature against the
// JWKS, algorithm, exp, nbf, iat, issuer, audience), and refuses with the
// API's problems (RFC 9457): 401 unauthorized with an RFC 6750
// WWW-Authenticate challenge without a valid token, 403
// insufficient-scope without the scope. It checks no tenancy claim. It is
// safe for concurrent use.
type Authenticator struct {
	verifier *tokenVerifier
	scope    string
}

// AuthenticatorConfig configures an Authenticator.
type AuthenticatorConfig struct {
	Keys     *JWKS  // required: token verification keys
	Issuer   string // required `iss` ("" = not checked)
	Audience string // required `aud` ("" = not checked)
	// Clients and ScopeClaims are the identity provider's dialect, as in
	// Config.
	Clients, ScopeClaims []string
	// Scope is the scope every request's token must carry (required; one
	// RFC 6749 scope token, e.g. "read:audit").
	Scope string
	// TokenCacheSize is how many verified tokens are remembered
	// (lookup_token_cache_* metrics in Registerer); 0 = no cache.
	TokenCacheSize int
	Registerer     prometheus.Registerer // nil = no metrics
	Now            func() time.Time      // nil = time.Now
}

// NewAuthenticator returns the Authenticator of cfg. It returns ErrNoKeys
// without Keys, an error for a Scope that is not one scope token, and an
// error if the metrics cannot be registered with cfg.Registerer.
func NewAuthenticator(cfg AuthenticatorConfig) (*Authenticator, error) {
	if cfg.Keys == nil {
		return nil, ErrNoKeys
	}
	if !isScopeToken(cfg.Scope) {
		return nil, fmt.Errorf("auth: AuthenticatorConfig.Scope %q: want one scope token", cfg.Scope)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	cm, err := newCacheMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	rules := tokenRules{issuer: cfg.Issuer, audience: cfg.Audience, clients: cfg.Clients, names: claimNames{scopes: cfg.ScopeClaims}}
	v := newTokenVerifier(cfg.Keys, rules, now, newTokenCache(cfg.TokenCacheSize, cm))
	return &Authenticator{verifier: v, scope: cfg.Scope}, nil
}

// Require returns next behind the token check: next sees only requests
// whose token is valid and carries the scope, with their Caller in the
// context (CallerFrom).
func (a *Authenticator) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := bearerPrincipal(a.verifier, w, r)
		if p == nil {
			return
		}
		if !p.hasScope(a.scope) {
			w.Header().Set("WWW-Authenticate", challenge("insufficient_scope", "scope "+a.scope+" is required", a.scope))
			writeProblem(w, r, probInsufficientScope, "The token lacks scope "+a.scope+".")
			return
		}
		next.ServeHTTP(w, withPrincipal(r, p))
	})
}

// ErrInsufficientScope is what Authorize returns for a valid token that
// lacks the Authenticator's scope (Require's 403).
var ErrInsufficientScope = errors.New("auth: the token lacks the required scope")

// errNoToken is what Authorize returns for a request without a token.
var errNoToken = errors.New("auth: a bearer token is required")

// Authorize verifies r's bearer token as Require does, but answers
// nothing: it returns the caller; ErrInsufficientScope (with the caller)
// for a valid token without the scope; or another error for no token or
// one refused (Require's 401). For a handler that answers refusals in its
// own form, as the officer's HTML pages do.
func (a *Authenticator) Authorize(r *http.Request) (Caller, error) {
	raw, present, err := bearerToken(r)
	switch {
	case !present:
		return Caller{}, errNoToken
	case err != nil:
		return Caller{}, err
	}
	p, err := a.verifier.verify(r.Context(), raw)
	if err != nil {
		return Caller{}, err
	}
	c := Caller{Subject: p.subject, Client: p.client}
	if !p.hasScope(a.scope) {
		return c, ErrInsufficientScope
	}
	return c, nil
}

// Caller is who a request admitted by an Authenticator comes from.
type Caller struct {
	Subject string // the token's sub
	Client  string // the token's azp, else client_id
}

// CallerFrom returns the Caller of a request admitted by Require (false
// for any other context).
func CallerFrom(ctx context.Context) (Caller, bool) {
	p := principalFrom(ctx)
	if p == nil {
		return Caller{}, false
	}
	return Caller{Subject: p.subject, Client: p.client}, true
}

// isScopeToken reports whether s is one RFC 6749 scope token: visible
// ASCII but the double quote and the backslash (so it may stand in a
// WWW-Authenticate challenge as it is).
func isScopeToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
