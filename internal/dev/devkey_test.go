package dev

import (
	"crypto/rand"
	"crypto/rsa"
	"path/filepath"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

func TestDevKeyPath(t *testing.T) {
	tests := []struct {
		name    string
		environ map[string]string
		dataDir string
		given   bool
		want    string
	}{
		{"data dir given", map[string]string{"HOME": "/home/a"}, "/d", true, "/d/dev-key.pem"},
		{"per-user key under HOME", map[string]string{"HOME": "/home/a"}, "/tmp/x", false, "/home/a/.cache/lookupd/dev-key.pem"},
		{"per-user key under XDG_CACHE_HOME", map[string]string{"HOME": "/home/a", "XDG_CACHE_HOME": "/c"}, "/tmp/x", false, "/c/lookupd/dev-key.pem"},
		{"relative XDG_CACHE_HOME ignored", map[string]string{"HOME": "/home/a", "XDG_CACHE_HOME": "c"}, "/tmp/x", false, "/home/a/.cache/lookupd/dev-key.pem"},
		{"no home: the data dir", nil, "/tmp/x", false, "/tmp/x/dev-key.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := KeyPath(func(k string) string { return tt.environ[k] }, tt.dataDir, tt.given); got != tt.want {
				t.Errorf("Path = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMintVerifiesAgainstJWKS: a key created once is loaded back as the
// same key, and a token it mints verifies against its public JWKS with the
// claims asked for.
func TestMintVerifiesAgainstJWKS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k", KeyFile)
	if _, err := LoadKey(path); err == nil {
		t.Fatal("Load of a missing key succeeded")
	}
	k, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := LoadOrCreateKey(path)
	if err != nil || !again.Equal(k) {
		t.Fatalf("key not reused: %v", err)
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	b, err := PublicJWKS(k)
	if err != nil {
		t.Fatal(err)
	}
	set, err := jwk.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	req := TokenRequest{Issuer: "iss", Audience: "aud", Subject: "sub", Scope: "a  b", TTL: time.Minute,
		TenantClaim: "tenants", Tenants: []string{"t1"}, Now: time.Now()}
	tok, err := Mint(k, req)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.Parse([]byte(tok), jwt.WithKeySet(set), jwt.WithValidate(true), jwt.WithIssuer("iss"), jwt.WithAudience("aud"))
	if err != nil {
		t.Fatalf("token does not verify: %v", err)
	}
	var scope string
	if err := parsed.Get("scope", &scope); err != nil || scope != "a b" {
		t.Errorf("scope = %q (%v), want %q", scope, err, "a b")
	}
	foreign, err := Mint(other, req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jwt.Parse([]byte(foreign), jwt.WithKeySet(set)); err == nil {
		t.Error("a token of another key verifies against this JWKS")
	}
	if _, err := Mint(k, TokenRequest{Subject: "s"}); err == nil {
		t.Error("Mint with no TTL succeeded")
	}
}
