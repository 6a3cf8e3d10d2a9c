// The dev key: the RSA key of "lookupd dev" and "lookupd token": where
// it is kept, how it is created and loaded, its public JWKS, and the tokens
// it signs. For development only: a deployment verifies the tokens of its
// own identity provider.

package dev

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// The dev key is a file of this name: in the data directory of "lookupd
// dev --data-dir", else the per-user key (userPath). "lookupd token"
// uses the same one by default (see Path). The public half is
// written to dev's data directory as a JWKS.
const (
	KeyFile  = "dev-key.pem"
	JWKSFile = "dev-jwks.json"
)

// userPath returns the path of the per-user dev key,
// $XDG_CACHE_HOME/lookupd/dev-key.pem or else ~/.cache/lookupd/dev-key.pem,
// and "" when neither XDG_CACHE_HOME (absolute) nor HOME is set.
func userPath(getenv func(string) string) string {
	if d := getenv("XDG_CACHE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "lookupd", KeyFile)
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".cache", "lookupd", KeyFile)
	}
	return ""
}

// KeyPath returns where "lookupd dev" and "lookupd token" keep the dev
// key: in dataDir when one was given (dataDirGiven), else the per-user
// key, else (no home directory) in dataDir.
func KeyPath(getenv func(string) string, dataDir string, dataDirGiven bool) string {
	if !dataDirGiven {
		if p := userPath(getenv); p != "" {
			return p
		}
	}
	return filepath.Join(dataDir, KeyFile)
}

// LoadOrCreateKey returns the RSA key in the PEM file at path, creating
// a fresh 2048-bit key there (mode 0600) when the file does not exist.
func LoadOrCreateKey(path string) (*rsa.PrivateKey, error) {
	k, err := LoadKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	k, err = rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generate dev key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("encode dev key: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("dev key: %w", err)
	}
	f, err := os.OpenFile(filepath.Clean(path), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("dev key: %w", err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		return nil, fmt.Errorf("write dev key %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("write dev key %s: %w", path, err)
	}
	return k, nil
}

// LoadKey reads an RSA private key from a PEM file (PKCS#8 or PKCS#1).
// The error wraps fs.ErrNotExist when there is no such file.
func LoadKey(path string) (*rsa.PrivateKey, error) {
	b, err := os.ReadFile(filepath.Clean(path))
	if err != nil {
		return nil, fmt.Errorf("dev key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("dev key %s: not a PEM file", path)
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("dev key %s: not a private key: %w", path, err)
	}
	k, ok := parsed.(*rsa.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("dev key %s: %T is not an RSA key", path, parsed)
	}
	return k, nil
}

// signingKey returns k as a JWK with alg RS256 (SigningJWK).
func signingKey(k *rsa.PrivateKey) (jwk.Key, error) {
	key, err := SigningJWK(k, jwa.RS256())
	if err != nil {
		return nil, fmt.Errorf("dev key: %w", err)
	}
	return key, nil
}

// SigningJWK returns the private key raw as a JWK with alg and a kid
// derived from its thumbprint (RFC 7638), so tokens and the JWKS agree on
// the kid: the dev key's, and each lookuptest server's.
func SigningJWK(raw any, alg jwa.SignatureAlgorithm) (jwk.Key, error) {
	key, err := jwk.Import(raw)
	if err != nil {
		return nil, err
	}
	if err := jwk.AssignKeyID(key); err != nil {
		return nil, err
	}
	if err := key.Set(jwk.AlgorithmKey, alg); err != nil {
		return nil, err
	}
	return key, nil
}

// PublicJWKS returns the JWKS (JSON) holding the public half of k.
func PublicJWKS(k *rsa.PrivateKey) ([]byte, error) {
	key, err := signingKey(k)
	if err != nil {
		return nil, err
	}
	b, err := JWKSOf(key)
	if err != nil {
		return nil, fmt.Errorf("dev key: %w", err)
	}
	return b, nil
}

// JWKSOf returns the JWKS (JSON) holding the public half of key, for
// signatures (use "sig").
func JWKSOf(key jwk.Key) ([]byte, error) {
	pub, err := key.PublicKey()
	if err != nil {
		return nil, err
	}
	if err := pub.Set(jwk.KeyUsageKey, "sig"); err != nil {
		return nil, err
	}
	set := jwk.NewSet()
	if err := set.AddKey(pub); err != nil {
		return nil, err
	}
	return json.MarshalIndent(set, "", "  ")
}

// TokenRequest describes a token to mint.
type TokenRequest struct {
	Issuer      string // iss; "" leaves it out
	Audience    string // aud; "" leaves it out
	Subject     string // sub
	ID          string // jti; "" leaves it out
	Scope       string // space-separated scopes
	TTL         time.Duration
	TenantClaim string   // name of the tenancy claim; "" leaves it out
	Tenants     []string // business ids for the tenancy claim
	Now         time.Time
}

// Mint returns a compact RS256 JWT signed with k carrying the claims
// of req (iat and nbf are req.Now, exp is req.Now + req.TTL).
func Mint(k *rsa.PrivateKey, req TokenRequest) (string, error) {
	if req.TTL <= 0 {
		return "", fmt.Errorf("token ttl %v: want a positive duration", req.TTL)
	}
	key, err := signingKey(k)
	if err != nil {
		return "", err
	}
	now := req.Now.Truncate(time.Second)
	b := jwt.NewBuilder().
		Subject(req.Subject).
		IssuedAt(now).
		NotBefore(now).
		Expiration(now.Add(req.TTL)).
		Claim("scope", strings.Join(strings.Fields(req.Scope), " "))
	if req.Issuer != "" {
		b = b.Issuer(req.Issuer)
	}
	if req.Audience != "" {
		b = b.Audience([]string{req.Audience})
	}
	if req.ID != "" {
		b = b.JwtID(req.ID)
	}
	if req.TenantClaim != "" {
		tenants := req.Tenants
		if tenants == nil {
			tenants = []string{}
		}
		b = b.Claim(req.TenantClaim, tenants)
	}
	tok, err := b.Build()
	if err != nil {
		return "", fmt.Errorf("build token: %w", err)
	}
	signed, err := jwt.Sign(tok, jwt.WithKey(jwa.RS256(), key))
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return string(signed), nil
}
