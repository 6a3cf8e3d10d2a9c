package query

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/testing/testkit"
)

// Fixed test identities.
const (
	testIssuer   = "https://issuer.test"
	testAudience = "lookup-api"
	testKID      = "rsa-1"
	testECKID    = "ec-1"
	testEdKID    = "ed-1"

	businessA  = "11111111-1111-4111-8111-111111111111"
	businessB  = "22222222-2222-4222-8222-222222222222"
	consumerA  = "aaaaaaaa-0000-4000-8000-000000000001"
	contactA   = "aaaaaaaa-0000-4000-8000-000000000002"
	consumerB  = "bbbbbbbb-0000-4000-8000-000000000001"
	consumerNo = "cccccccc-0000-4000-8000-000000000009"
)

// testNow is the fixed clock of the handler tests.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// fakeReader is a hand-written Reader whose behaviour is set per test.
type fakeReader struct {
	PersonFunc  func(ctx context.Context, id string) (events.Person, error)
	SignersFunc func(ctx context.Context, consumerID string) (events.Person, []events.Signer, error)
}

var _ Reader = (*fakeReader)(nil)

func (f *fakeReader) Person(ctx context.Context, id string) (events.Person, error) {
	return f.PersonFunc(ctx, id)
}

func (f *fakeReader) Signers(ctx context.Context, consumerID string) (events.Person, []events.Signer, error) {
	return f.SignersFunc(ctx, consumerID)
}

// keys used to sign test tokens, generated once.
var (
	keysOnce sync.Once
	rsaKey   *rsa.PrivateKey
	rsaKey2  *rsa.PrivateKey
	ecKey    *ecdsa.PrivateKey
	edKey    ed25519.PrivateKey
)

// testKeys sets the keys of the tests, testkit's (made once a binary).
func testKeys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		k := testkit.TestJWSKeys()
		rsaKey, rsaKey2, ecKey, edKey = k.RSA, k.RSA2, k.EC, k.Ed
	})
}

func publicJWK(t testing.TB, key any, kid, alg string) map[string]any {
	t.Helper()
	return testkit.PublicJWK(t, key, kid, alg)
}

func jwksJSON(t testing.TB, keys ...map[string]any) []byte {
	t.Helper()
	return testkit.JWKSJSON(t, keys...)
}

// testJWKS returns the standard key set: the RSA key (alg RS256), the EC
// key and the Ed25519 key (both without alg).
func testJWKS(t testing.TB) *auth.JWKS {
	t.Helper()
	testKeys(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	doc := jwksJSON(t,
		publicJWK(t, rsaKey, testKID, "RS256"),
		publicJWK(t, ecKey, testECKID, ""),
		publicJWK(t, edKey, testEdKID, ""),
	)
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadJWKSFile(path)
	if err != nil {
		t.Fatalf("LoadJWKSFile: %v", err)
	}
	return keys
}

// signToken builds a compact JWS with header and claims, signed by alg
// with key (alg "none" gives an empty signature): testkit.SignToken.
func signToken(t testing.TB, header, claims map[string]any, alg string, key any) string {
	t.Helper()
	return testkit.SignToken(t, header, claims, alg, key)
}

// goodClaims returns valid claims for the standard issuer and audience,
// with scope.
func goodClaims(scope string) map[string]any {
	return map[string]any{
		"iss":   testIssuer,
		"aud":   testAudience,
		"sub":   "client-42",
		"iat":   testNow.Add(-time.Minute).Unix(),
		"nbf":   testNow.Add(-time.Minute).Unix(),
		"exp":   testNow.Add(time.Hour).Unix(),
		"scope": scope,
	}
}

// rsaToken returns an RS256 token over claims with the standard kid.
func rsaToken(t testing.TB, claims map[string]any) string {
	t.Helper()
	testKeys(t)
	return signToken(t, map[string]any{"alg": "RS256", "typ": "JWT", "kid": testKID}, claims, "RS256", rsaKey)
}

// newTestServer returns a Server over reader with the standard keys,
// issuer, audience and clock; tenantClaim enables tenancy.
func newTestServer(t testing.TB, reader Reader, tenantClaim string) *Server {
	t.Helper()
	s, err := NewServer(Config{
		Reader: reader,
		Tokens: testVerifier(t, testJWKS(t), tenantClaim),
		Now:    func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	return s
}

// testVerifier returns internal/auth's verifier of keys with the
// standard issuer, audience and clock, without a token cache;
// tenantClaim enables tenancy.
func testVerifier(t testing.TB, keys *auth.JWKS, tenantClaim string) TokenVerifier {
	t.Helper()
	v, err := auth.NewVerifier(auth.Config{Keys: keys, Issuer: testIssuer, Audience: testAudience,
		TenantClaim: tenantClaim, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatalf("auth.NewVerifier: %v", err)
	}
	return v
}

// bearerRequest returns a GET request bearing token, for the verifier.
func bearerRequest(ctx context.Context, token string) *http.Request {
	r := httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	r.Header.Set("Authorization", "Bearer "+token)
	return r
}

// serve runs req through h, validates the exchange against openapi.yaml
// and returns the recorded response.
func serve(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	validateExchange(t, req, rec)
	return rec
}

// newRequest builds a request with an optional bearer token.
func newRequest(method, target, token string) *http.Request {
	req := httptest.NewRequest(method, target, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// decodeProblem decodes a problem body.
func decodeProblem(t *testing.T, rec *httptest.ResponseRecorder) problemBody {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json", ct)
	}
	var p problemBody
	dec := json.NewDecoder(strings.NewReader(rec.Body.String()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode problem %q: %v", rec.Body.String(), err)
	}
	return p
}

// typeURI returns the stable type URI of k.

// tamper flips one bit of the character at index i of s (staying within
// the base64url alphabet).
func tamper(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func withClaims(scope string, edit func(map[string]any)) map[string]any {
	c := goodClaims(scope)
	edit(c)
	return c
}
