package lookuptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/lookup/persons/internal/dev"
)

// The scopes of the API (docs/api.md).
const (
	ScopeRead  = "read:persons"     // both operations
	ScopeSSN   = "read:persons:ssn" // ssn_mode=FULL
	ScopeAudit = "read:audit"       // the accounting service
)

// Defaults of the tokens a test server trusts.
const (
	DefaultIssuer   = "https://issuer.lookuptest.invalid/"
	DefaultAudience = "lookupd"
	DefaultSubject  = "lookuptest"
	DefaultClientID = "lookuptest-client"
	DefaultTokenTTL = time.Hour
)

// A TokenOption shapes a token of Token. Options that contradict each
// other or the server (tenants on a server without tenancy, a negative
// lifetime) make Token fail, so that a test never runs with a token it did
// not mean.
type TokenOption func(*tokenSpec) error

// tokenSpec is what a token will hold.
type tokenSpec struct {
	issuer, audience, subject, clientID string
	scopes                              []string
	ttl                                 time.Duration
	expired, foreignKey                 bool
	tenants                             []string
	tenantsSet, ttlSet, scopesSet       bool
	now                                 func() time.Time
}

// Scopes sets the token's scopes (read:persons alone by default); none at
// all gives a token the API answers 403 insufficient-scope.
func Scopes(scopes ...string) TokenOption {
	return func(s *tokenSpec) error {
		for _, sc := range scopes {
			if sc == "" || strings.ContainsAny(sc, " \t\r\n\"") {
				return fmt.Errorf("scope %q: want one scope without spaces or quotes", sc)
			}
		}
		if s.scopesSet {
			return errors.New("Scopes given twice")
		}
		s.scopes, s.scopesSet = append([]string(nil), scopes...), true
		return nil
	}
}

// Subject sets the token's sub (DefaultSubject by default), recorded in
// the disclosure ledger.
func Subject(sub string) TokenOption {
	return func(s *tokenSpec) error {
		if sub == "" {
			return errors.New("empty subject")
		}
		s.subject = sub
		return nil
	}
}

// ClientID sets the token's azp (DefaultClientID by default), the client
// the disclosure ledger names.
func ClientID(id string) TokenOption {
	return func(s *tokenSpec) error {
		if id == "" {
			return errors.New("empty client id")
		}
		s.clientID = id
		return nil
	}
}

// Tenants sets the business ids the token may read, on a server with
// tenancy (WithTenancy): a person of another business is then a 403
// forbidden. Without the option such a token carries an empty list.
func Tenants(businessIDs ...string) TokenOption {
	return func(s *tokenSpec) error {
		s.tenants, s.tenantsSet = append([]string{}, businessIDs...), true
		return nil
	}
}

// ExpiresIn sets the token's lifetime (DefaultTokenTTL by default).
func ExpiresIn(d time.Duration) TokenOption {
	return func(s *tokenSpec) error {
		if d <= 0 {
			return fmt.Errorf("lifetime %v: want a positive duration (use Expired for an expired token)", d)
		}
		s.ttl, s.ttlSet = d, true
		return nil
	}
}

// Expired makes a token that expired an hour ago, well beyond the
// service's clock skew: a 401.
func Expired() TokenOption {
	return func(s *tokenSpec) error { s.expired = true; return nil }
}

// Audience sets the token's aud; any other than the server's is a 401.
func Audience(aud string) TokenOption {
	return func(s *tokenSpec) error {
		if aud == "" {
			return errors.New("empty audience")
		}
		s.audience = aud
		return nil
	}
}

// Issuer sets the token's iss; any other than the server's is a 401.
func Issuer(iss string) TokenOption {
	return func(s *tokenSpec) error {
		if iss == "" {
			return errors.New("empty issuer")
		}
		s.issuer = iss
		return nil
	}
}

// SignedByAnotherKey signs the token with a key the server does not
// trust (made for this token alone): a 401.
func SignedByAnotherKey() TokenOption {
	return func(s *tokenSpec) error { s.foreignKey = true; return nil }
}

// Key is a signing key made for one test server: its tokens are signed
// with it, and the server trusts its public half alone. It is never
// written to disk and never shared between servers. The container module
// (lookupdcontainer) makes one per container the same way.
type Key struct {
	key  jwk.Key // private, with kid and alg
	jwks []byte  // the public half, as a JWKS
}

// NewKey makes a fresh ES256 key (fast to make, unlike RSA, so that a
// server starts quickly).
func NewKey() (*Key, error) {
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("lookuptest: signing key: %w", err)
	}
	key, err := dev.SigningJWK(raw, jwa.ES256())
	if err != nil {
		return nil, fmt.Errorf("lookuptest: signing key: %w", err)
	}
	b, err := dev.JWKSOf(key)
	if err != nil {
		return nil, fmt.Errorf("lookuptest: signing key: %w", err)
	}
	return &Key{key: key, jwks: b}, nil
}

// TokenPolicy is what a server's tokens must carry: its issuer, audience
// and tenancy claim. The test server and the container module mint with
// it alike.
type TokenPolicy struct {
	Issuer, Audience string
	TenantClaim      string // "" without tenancy
}

// JWKS is the public half of k, as a JSON Web Key Set: what the server is
// given to verify tokens.
func (k *Key) JWKS() []byte { return append([]byte(nil), k.jwks...) }

// Token returns a token of the policy p shaped by opts, signed with k
// (or, for SignedByAnotherKey, with a key made for the token alone).
func (k *Key) Token(p TokenPolicy, opts ...TokenOption) (string, error) {
	s := tokenSpec{issuer: p.Issuer, audience: p.Audience, subject: DefaultSubject, clientID: DefaultClientID,
		scopes: []string{ScopeRead}, ttl: DefaultTokenTTL, now: time.Now}
	for _, o := range opts {
		if err := o(&s); err != nil {
			return "", fmt.Errorf("lookuptest: token: %w", err)
		}
	}
	if s.tenantsSet && p.TenantClaim == "" {
		return "", errors.New("lookuptest: token: Tenants on a server without tenancy (WithTenancy)")
	}
	if s.expired && s.ttlSet {
		return "", errors.New("lookuptest: token: both Expired and ExpiresIn")
	}
	now := s.now().Truncate(time.Second)
	iat, exp := now, now.Add(s.ttl)
	if s.expired {
		iat, exp = now.Add(-2*time.Hour), now.Add(-time.Hour)
	}
	b := jwt.NewBuilder().Issuer(s.issuer).Audience([]string{s.audience}).Subject(s.subject).
		IssuedAt(iat).NotBefore(iat).Expiration(exp).
		Claim("azp", s.clientID).Claim("scope", strings.Join(s.scopes, " "))
	if p.TenantClaim != "" {
		b = b.Claim(p.TenantClaim, append([]string{}, s.tenants...))
	}
	tok, err := b.Build()
	if err != nil {
		return "", fmt.Errorf("lookuptest: token: %w", err)
	}
	key := k.key
	if s.foreignKey {
		other, err := NewKey()
		if err != nil {
			return "", err
		}
		key = other.key
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), key))
	if err != nil {
		return "", fmt.Errorf("lookuptest: token: %w", err)
	}
	return string(signed), nil
}
