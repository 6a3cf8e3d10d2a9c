// Tokens: an identity provider for tests: it signs JWTs with
// a fresh key of its own and gives the JWKS (the key's public half) that a
// server verifies them against.

package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// Issuer signs tokens with one key.
type Issuer struct {
	key jwk.Key
	alg jwa.SignatureAlgorithm
	// JWKS is the JSON Web Key Set of the key's public half (with its kid
	// and alg).
	JWKS []byte
}

// NewRSAIssuer returns an issuer with a fresh 2048-bit NewRSAIssuer key signing RS256.
func NewRSAIssuer(t testing.TB) *Issuer {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("rsa key: %v", err)
	}
	return newIssuer(t, k, jwa.RS256())
}

// NewECDSAIssuer returns an issuer with a fresh P-256 key signing ES256.
func NewECDSAIssuer(t testing.TB) *Issuer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("ecdsa key: %v", err)
	}
	return newIssuer(t, k, jwa.ES256())
}

// newIssuer imports raw with a kid (its thumbprint) and alg, and builds
// the JWKS of its public half.
func newIssuer(t testing.TB, raw crypto.Signer, alg jwa.SignatureAlgorithm) *Issuer {
	t.Helper()
	key, err := jwk.Import(raw)
	if err != nil {
		t.Fatalf("jwk import: %v", err)
	}
	if err := jwk.AssignKeyID(key); err != nil {
		t.Fatalf("kid: %v", err)
	}
	if err := key.Set(jwk.AlgorithmKey, alg); err != nil {
		t.Fatalf("alg: %v", err)
	}
	pub, err := key.PublicKey()
	if err != nil {
		t.Fatalf("public key: %v", err)
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		t.Fatalf("jwks: %v", err)
	}
	b, err := json.Marshal(set)
	if err != nil {
		t.Fatalf("jwks: %v", err)
	}
	return &Issuer{key: key, alg: alg, JWKS: b}
}

// Sign builds the token of b and returns it signed, in compact form.
func (is *Issuer) Sign(t testing.TB, b *jwt.Builder) string {
	t.Helper()
	tok, err := b.Build()
	if err != nil {
		t.Fatalf("build token: %v", err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(is.alg, is.key))
	if err != nil {
		t.Fatalf("sign token: %v", err)
	}
	return string(signed)
}

// WriteJWKS writes the JWKS to a file in a temporary directory of t and
// returns its path.
func (is *Issuer) WriteJWKS(t testing.TB) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(p, is.JWKS, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TokenClaims returns the claims of a compact JWT, decoded without verifying
// (a test that checks what a token carries).
func TokenClaims(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token has %d parts", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
