package auth

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// ErrNoKeys is returned by NewVerifier and NewAuthenticator without keys.
var ErrNoKeys = errors.New("auth: Config.Keys is required")

// Config configures a Verifier.
type Config struct {
	Keys        *JWKS  // required: token verification keys
	Issuer      string // required `iss` ("" = not checked)
	Audience    string // required `aud` ("" = not checked)
	TenantClaim string // claim holding the caller's business ids; "" = tenancy off
	// Clients, when not empty, are the client ids accepted: the token's
	// azp, else its client_id, must be one of them (Amazon Cognito's
	// access tokens carry no aud but a client_id, so that a pool's other
	// app clients are refused). Empty: not checked.
	Clients []string
	// ScopeClaims names the claims that grant scopes, each a string of
	// space-separated scopes or an array of strings (Microsoft Entra ID
	// puts an application's permissions in "roles"). Empty: "scope" and
	// "scp", the claims of RFC 8693 and of most providers.
	ScopeClaims []string
	// TokenCacheSize is how many verified tokens are remembered (see
	// tokencache.go; lookup_token_cache_* metrics); 0 = no cache. Servers
	// use DefaultTokenCacheSize unless told otherwise.
	TokenCacheSize int
	Registerer     prometheus.Registerer // token cache metrics registered here; nil = none
	Now            func() time.Time      // nil = time.Now
}

// DefaultTokenCacheSize is the token cache's size in lookupd serve and
// lookuptest unless configured (LOOKUP_TOKEN_CACHE_SIZE).
const DefaultTokenCacheSize = 10000

// Verifier verifies the bearer tokens of the API's requests: it is the
// query.TokenVerifier that cmd/lookupd gives query.NewServer. It is safe
// for concurrent use.
type Verifier struct {
	v *tokenVerifier
}

// NewVerifier returns the Verifier of cfg. It returns ErrNoKeys without
// Keys, and an error if the metrics cannot be registered with
// cfg.Registerer.
func NewVerifier(cfg Config) (*Verifier, error) {
	if cfg.Keys == nil {
		return nil, ErrNoKeys
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	cm, err := newCacheMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	rules := tokenRules{issuer: cfg.Issuer, audience: cfg.Audience, clients: cfg.Clients,
		names: claimNames{tenant: cfg.TenantClaim, scopes: cfg.ScopeClaims}}
	return &Verifier{v: newTokenVerifier(cfg.Keys, rules, now, newTokenCache(cfg.TokenCacheSize, cm))}, nil
}

// Principal is what a verified token says about its bearer, as
// query.Principal declares it: the same interface literal, so that a
// Verifier is a query.TokenVerifier without this package importing query.
type Principal = interface {
	Subject() string
	Client() string
	HasScope(scope string) bool
	TenancyOn() bool
	TenancyClaim() (present, wellFormed bool)
	Tenants() []string
	MayAccess(businessID string) bool
}

// VerifyBearer judges the bearer credentials of r. It returns the
// principal of a valid token; nil and a nil error when r carries no
// bearer credentials; else the refusal (an error whose TokenRefusal
// method gives its RFC 6750 error_description and whether it is an
// invalid_request), or the error of r's context when it ended during the
// verification (the token was not judged).
func (v *Verifier) VerifyBearer(r *http.Request) (Principal, error) {
	raw, present, err := bearerToken(r)
	if !present {
		return nil, nil
	}
	var p *principal
	if err == nil {
		p, err = v.v.verify(r.Context(), raw)
	}
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		var te tokenError
		if !errors.As(err, &te) {
			te = errTokenSignature
		}
		return nil, te
	}
	return p, nil
}

// TokenRefusal gives the refusal's RFC 6750 error_description (a fixed
// phrase, never any part of the token) and whether it is answered with
// error="invalid_request" (a malformed request) rather than
// error="invalid_token".
func (e tokenError) TokenRefusal() (desc string, invalidRequest bool) {
	return string(e), e == errTokenEmpty || e == errTokenHeaders
}
