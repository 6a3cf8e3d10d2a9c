package testkit

import (
	"os"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

func TestIssuerTokensVerifyWithItsJWKS(t *testing.T) {
	for _, tc := range []struct {
		name string
		new  func(testing.TB) *Issuer
	}{
		{"RSA", NewRSAIssuer},
		{"ECDSA", NewECDSAIssuer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := tc.new(t)
			b, err := os.ReadFile(is.WriteJWKS(t))
			if err != nil {
				t.Fatal(err)
			}
			set, err := jwk.Parse(b)
			if err != nil {
				t.Fatalf("parse JWKS: %v", err)
			}
			signed := is.Sign(t, jwt.NewBuilder().Subject("s1").Expiration(time.Now().Add(time.Minute)))
			tok, err := jwt.Parse([]byte(signed), jwt.WithKeySet(set))
			if err != nil {
				t.Fatalf("verify with the issuer's JWKS: %v", err)
			}
			if sub, _ := tok.Subject(); sub != "s1" {
				t.Errorf("sub = %q, want s1", sub)
			}
			if _, err := jwt.Parse([]byte(signed), jwt.WithKeySet(tc.new(t).publicSet(t))); err == nil {
				t.Error("another issuer's JWKS verified the token, want an error")
			}
		})
	}
}

func (is *Issuer) publicSet(t *testing.T) jwk.Set {
	t.Helper()
	set, err := jwk.Parse(is.JWKS)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestClaims: Claims reads back what Sign signed.
func TestClaims(t *testing.T) {
	is := NewRSAIssuer(t)
	got := TokenClaims(t, is.Sign(t, jwt.NewBuilder().Subject("s1").Claim("scope", "read:persons")))
	if got["sub"] != "s1" || got["scope"] != "read:persons" {
		t.Errorf("Claims = %v, want sub s1 and scope read:persons", got)
	}
}
