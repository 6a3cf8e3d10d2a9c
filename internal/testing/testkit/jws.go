package testkit

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"sync"
	"testing"

	"github.com/lestrrat-go/jwx/v3/jwk"
)

// JWSKeys are the keys the token tests sign with (the attack suites of
// internal/auth and the API's tests of query): made once per test binary,
// never written anywhere.
type JWSKeys struct {
	RSA, RSA2 *rsa.PrivateKey
	EC        *ecdsa.PrivateKey
	Ed        ed25519.PrivateKey
}

var (
	jwsKeysOnce sync.Once
	jwsKeys     JWSKeys
)

// TestJWSKeys returns the test binary's JWSKeys, made on first use.
func TestJWSKeys() JWSKeys {
	jwsKeysOnce.Do(func() {
		var err error
		if jwsKeys.RSA, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if jwsKeys.RSA2, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
			panic(err)
		}
		if jwsKeys.EC, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
		if _, jwsKeys.Ed, err = ed25519.GenerateKey(rand.Reader); err != nil {
			panic(err)
		}
	})
	return jwsKeys
}

// JWKObject returns key as a JWK JSON object: only its public half when
// public is true.
func JWKObject(t testing.TB, key any, public bool) map[string]any {
	t.Helper()
	k, err := jwk.Import(key)
	if err != nil {
		t.Fatalf("jwk.Import: %v", err)
	}
	if public {
		if k, err = k.PublicKey(); err != nil {
			t.Fatalf("PublicKey: %v", err)
		}
	}
	b, err := json.Marshal(k)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// PublicJWK returns the public JWK of key with kid and, when alg is not
// "", alg.
func PublicJWK(t testing.TB, key any, kid, alg string) map[string]any {
	t.Helper()
	m := JWKObject(t, key, true)
	m["kid"] = kid
	if alg != "" {
		m["alg"] = alg
	}
	return m
}

// JWKSJSON returns a JWKS document holding keys.
func JWKSJSON(t testing.TB, keys ...map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// B64 is base64url without padding, as JWS segments are written.
func B64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// SignToken builds a compact JWS by hand (so that tests can make any
// token, malformed ones too) with header and claims, signed by alg with
// key: RS256, RS512, PS256, ES256, EdDSA, HS256 (key a []byte), or
// "none" (an empty signature).
func SignToken(t testing.TB, header, claims map[string]any, alg string, key any) string {
	t.Helper()
	hb, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	input := B64(hb) + "." + B64(cb)
	var sig []byte
	switch alg {
	case "none":
	case "RS256":
		h := sha256.Sum256([]byte(input))
		sig, err = rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, h[:])
	case "RS512":
		h := sha512.Sum512([]byte(input))
		sig, err = rsa.SignPKCS1v15(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA512, h[:])
	case "PS256":
		h := sha256.Sum256([]byte(input))
		sig, err = rsa.SignPSS(rand.Reader, key.(*rsa.PrivateKey), crypto.SHA256, h[:], &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case "ES256":
		h := sha256.Sum256([]byte(input))
		var r, s *big.Int
		r, s, err = ecdsa.Sign(rand.Reader, key.(*ecdsa.PrivateKey), h[:])
		if err == nil {
			sig = make([]byte, 64)
			r.FillBytes(sig[:32])
			s.FillBytes(sig[32:])
		}
	case "EdDSA":
		sig = ed25519.Sign(key.(ed25519.PrivateKey), []byte(input))
	case "HS256":
		m := hmac.New(sha256.New, key.([]byte))
		m.Write([]byte(input))
		sig = m.Sum(nil)
	default:
		t.Fatalf("SignToken: unsupported alg %s", alg)
	}
	if err != nil {
		t.Fatalf("sign %s: %v", alg, err)
	}
	return input + "." + B64(sig)
}
