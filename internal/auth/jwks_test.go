package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"

	"github.com/lookup/persons/internal/testing/testkit"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func writeFile(t *testing.T, content []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadJWKSFileErrors(t *testing.T) {
	testKeys(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p521, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	encKey := publicJWK(t, rsaKey, "enc", "")
	encKey["use"] = "enc"
	wrapOnly := publicJWK(t, rsaKey, "wrap", "")
	wrapOnly["key_ops"] = []string{"wrapKey"}
	hsAlg := publicJWK(t, rsaKey, "hs", "HS256")
	esOnRSA := publicJWK(t, rsaKey, "es", "ES256")

	tests := []struct {
		name    string
		content []byte // nil: no file
		wantIs  error
		wantMsg string
	}{
		{name: "missing file", wantIs: fs.ErrNotExist, wantMsg: "jwks file"},
		{name: "empty file", content: []byte{}, wantMsg: "invalid JWKS"},
		{name: "not JSON", content: []byte("keys: []"), wantMsg: "invalid JWKS"},
		{name: "empty set", content: []byte(`{"keys":[]}`), wantIs: ErrNoUsableKeys},
		{name: "only a symmetric key", content: []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0","kid":"h"}]}`), wantIs: ErrNoUsableKeys},
		{name: "RSA 1024", content: jwksJSON(t, map[string]any{"kty": "RSA", "kid": "small",
			"n": b64(small.N.Bytes()), "e": "AQAB"})},
		{name: "P-521", content: jwksJSON(t, publicJWK(t, p521, "p521", "")), wantIs: ErrNoUsableKeys},
		{name: "encryption key", content: jwksJSON(t, encKey), wantIs: ErrNoUsableKeys},
		{name: "key_ops without verify", content: jwksJSON(t, wrapOnly), wantIs: ErrNoUsableKeys},
		{name: "RSA key claiming HS256", content: jwksJSON(t, hsAlg), wantIs: ErrNoUsableKeys},
		{name: "RSA key claiming ES256", content: jwksJSON(t, esOnRSA), wantIs: ErrNoUsableKeys},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "absent.json")
			if tc.content != nil {
				path = writeFile(t, tc.content)
			}
			keys, err := LoadJWKSFile(path)
			if err == nil || keys != nil {
				t.Fatalf("LoadJWKSFile = %v, %v; want an error", keys, err)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v, want errors.Is %v", err, tc.wantIs)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file %s", err, path)
			}
			if tc.wantMsg != "" && !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("error %q does not say %q", err, tc.wantMsg)
			}
		})
	}
}

func TestLoadJWKSFileKeeps(t *testing.T) {
	testKeys(t)
	encKey := publicJWK(t, rsaKey2, "enc", "")
	encKey["use"] = "enc"
	tests := []struct {
		name    string
		content []byte
		kid     string
		alg     jwa.SignatureAlgorithm
		want    int // candidate keys
	}{
		{"single JWK, not a set", mustJSON(t, publicJWK(t, rsaKey, "one", "RS256")), "one", jwa.RS256(), 1},
		{"private JWK is used as public", jwksJSON(t, privateJWK(t, rsaKey, "priv")), "priv", jwa.RS256(), 1},
		{"usable keys kept, others dropped", jwksJSON(t, encKey, publicJWK(t, rsaKey, "sig", "")), "sig", jwa.PS256(), 1},
		{"dropped key is not a candidate", jwksJSON(t, encKey, publicJWK(t, rsaKey, "sig", "")), "enc", jwa.RS256(), 0},
		{"EC P-384 verifies ES384 only", jwksJSON(t, publicJWK(t, mustEC(t, elliptic.P384()), "p384", "")), "p384", jwa.ES384(), 1},
		{"EC P-384 refuses ES256", jwksJSON(t, publicJWK(t, mustEC(t, elliptic.P384()), "p384", "")), "p384", jwa.ES256(), 0},
		{"no kid: every key allowing alg", jwksJSON(t, publicJWK(t, rsaKey, "a", ""), publicJWK(t, rsaKey2, "b", "RS256"), publicJWK(t, ecKey, "c", "")), "", jwa.RS256(), 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys, err := LoadJWKSFile(writeFile(t, tc.content))
			if err != nil {
				t.Fatalf("LoadJWKSFile: %v", err)
			}
			if got := len(keys.candidates(t.Context(), tc.kid, tc.alg)); got != tc.want {
				t.Errorf("candidates(%q, %s) = %d keys, want %d", tc.kid, tc.alg, got, tc.want)
			}
		})
	}
}

func mustEC(t *testing.T, c elliptic.Curve) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(c, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jwksServer is an httptest JWKS endpoint whose document and status can
// be changed, counting the fetches it answers.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	doc     []byte
	status  int
	fetches atomic.Int64
}

// keys returns the key set fetched from js with tuning (newJWKSFromURL),
// failing the test if the first fetch fails.
func (js *jwksServer) keys(t *testing.T, tuning jwksTuning) *JWKS {
	t.Helper()
	keys, err := newJWKSFromURL(t.Context(), js.URL, js.Client(), tuning)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func newJWKSServer(t *testing.T, doc []byte) *jwksServer {
	t.Helper()
	js := &jwksServer{doc: doc, status: http.StatusOK}
	js.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		js.fetches.Add(1)
		js.mu.Lock()
		doc, status := js.doc, js.status
		js.mu.Unlock()
		w.Header().Set("Content-Type", "application/jwk-set+json")
		w.WriteHeader(status)
		_, _ = w.Write(doc)
	}))
	t.Cleanup(js.Close)
	return js
}

func (js *jwksServer) set(doc []byte, status int) {
	js.mu.Lock()
	defer js.mu.Unlock()
	js.doc, js.status = doc, status
}

func TestNewJWKSFromURLFirstFetchFails(t *testing.T) {
	testKeys(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	tests := []struct {
		name   string
		doc    []byte
		status int
		url    string
		want   string
	}{
		{name: "404", doc: []byte("no"), status: 404, want: "unexpected status 404"},
		{name: "500", doc: []byte("{}"), status: 500, want: "unexpected status 500"},
		{name: "not a JWKS", doc: []byte("<html>"), status: 200, want: "invalid JWKS"},
		{name: "no usable key", doc: []byte(`{"keys":[]}`), status: 200, want: "no usable verification key"},
		{name: "unreachable", url: deadURL + "/jwks.json", want: "jwks url"},
		{name: "bad URL", url: "://nope", want: "jwks url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if url == "" {
				js := newJWKSServer(t, tc.doc)
				js.set(tc.doc, tc.status)
				url = js.URL + "/keys"
			}
			keys, err := NewJWKSFromURL(t.Context(), url, nil)
			if err == nil || keys != nil {
				t.Fatalf("NewJWKSFromURL = %v, %v; want an error", keys, err)
			}
			if !strings.Contains(err.Error(), url) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to name %q and say %q", err, url, tc.want)
			}
		})
	}
}

func TestJWKSFromURLCachedAndRotated(t *testing.T) {
	testKeys(t)
	js := newJWKSServer(t, jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256")))
	clock := &fakeClock{now: testNow}
	keys := js.keys(t, jwksTuning{minRefetch: time.Minute, now: clock.Now})
	s, err := NewServer(apiConfig{Reader: fixtureReader(), Keys: keys, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	get := func(kid string, key *rsa.PrivateKey) int {
		t.Helper()
		tok := signToken(t, map[string]any{"alg": "RS256", "kid": kid}, goodClaims("read:persons"), "RS256", key)
		return serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, tok)).Code
	}

	// Cached: many verifications, one fetch.
	for i := 0; i < 5; i++ {
		if code := get("k1", rsaKey); code != 200 {
			t.Fatalf("k1 token: status %d, want 200", code)
		}
	}
	if n := js.fetches.Load(); n != 1 {
		t.Fatalf("fetches = %d after cached use, want 1", n)
	}

	// Rotation: the issuer adds k2. The start-up fetch does not count
	// against the unknown-kid cool-down, so the first token naming k2
	// triggers one refetch that finds it.
	js.set(jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"), publicJWK(t, rsaKey2, "k2", "RS256")), 200)
	if code := get("k2", rsaKey2); code != 200 {
		t.Fatalf("k2 token after rotation: status %d, want 200", code)
	}
	if n := js.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d after refetch, want 2", n)
	}
	// Known kids do not refetch; unknown ones are rate-limited again.
	for i := 0; i < 5; i++ {
		get("k2", rsaKey2)
		if code := get("k3", rsaKey2); code != 401 {
			t.Fatalf("unknown kid k3: status %d, want 401", code)
		}
	}
	if n := js.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d after repeated unknown kids, want 2 (rate-limited)", n)
	}
	clock.Advance(time.Minute)
	get("k3", rsaKey2)
	if n := js.fetches.Load(); n != 3 {
		t.Fatalf("fetches = %d after the limit passed, want 3", n)
	}

	// A failed refetch keeps the keys held.
	js.set([]byte("oops"), 500)
	clock.Advance(time.Minute)
	if code := get("k4", rsaKey2); code != 401 {
		t.Fatalf("unknown kid during outage: status %d, want 401", code)
	}
	if code := get("k1", rsaKey); code != 200 {
		t.Fatalf("k1 after failed refetch: status %d, want 200", code)
	}
}

func TestJWKSFromURLConcurrentUnknownKidFetchesOnce(t *testing.T) {
	testKeys(t)
	js := newJWKSServer(t, jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256")))
	clock := &fakeClock{now: testNow}
	keys := js.keys(t, jwksTuning{minRefetch: time.Minute, now: clock.Now})
	clock.Advance(time.Hour)
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys.candidates(t.Context(), "nope", jwa.RS256())
		}()
	}
	wg.Wait()
	if n := js.fetches.Load(); n != 2 {
		t.Errorf("fetches = %d, want 2 (initial + one refetch)", n)
	}
}

func TestJWKSFromURLRefreshesInBackground(t *testing.T) {
	testKeys(t)
	js := newJWKSServer(t, jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256")))
	ctx, cancel := context.WithCancel(t.Context())
	keys, err := newJWKSFromURL(ctx, js.URL, js.Client(), jwksTuning{refresh: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The issuer replaces k1 by k2; the background refresh picks it up
	// without any token asking.
	js.set(jwksJSON(t, publicJWK(t, rsaKey2, "k2", "RS256")), 200)
	testkit.WaitFor(t, 30*time.Second, func() error {
		if _, ok := keys.set.Load().byKID["k2"]; !ok {
			return errors.New("k2 not loaded yet")
		}
		return nil
	})
	if _, ok := keys.set.Load().byKID["k1"]; ok {
		t.Errorf("k1 still held after it was removed")
	}
	cancel()
	select {
	case <-keys.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("background refresh did not stop after ctx was done")
	}
}

// TestJWKSRefreshFailuresLogged: failed refreshes of a URL key set, in
// the background and on an unknown kid, are logged at Warn with the URL
// stripped of credentials and query, and without key material.
func TestJWKSRefreshFailuresLogged(t *testing.T) {
	testKeys(t)
	doc := jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"))
	js := newJWKSServer(t, doc)
	var buf testkit.LogBuffer
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	secretURL := strings.Replace(js.URL, "http://", "http://svc:hunter2@", 1) + "/keys?api_key=s3cr3t"
	clock := &fakeClock{now: testNow}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	keys, err := newJWKSFromURL(ctx, secretURL, js.Client(), jwksTuning{refresh: 5 * time.Millisecond, minRefetch: time.Minute, now: clock.Now, log: log})
	if err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); out != "" {
		t.Fatalf("logged while the JWKS answered: %s", out)
	}
	js.set([]byte(`{"keys":[{"kty":"RSA","n":"not-key-material-but-close"}]}`), http.StatusOK)
	testkit.WaitFor(t, 30*time.Second, func() error {
		if !strings.Contains(buf.String(), `"trigger":"background"`) {
			return errors.New("no background refresh failure logged yet")
		}
		return nil
	})
	cancel()
	<-keys.stopped

	// An unknown kid past the rate limit refetches, fails, and logs. This
	// part runs on a set whose background refresh is an hour away, so that
	// only the unknown-kid refetch can log.
	js.set(doc, http.StatusOK)
	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	keys, err = newJWKSFromURL(ctx, secretURL, js.Client(), jwksTuning{refresh: time.Hour, minRefetch: time.Minute, now: clock.Now, log: log})
	if err != nil {
		t.Fatal(err)
	}
	js.set([]byte("down"), http.StatusBadGateway)
	clock.Advance(time.Hour)
	keys.candidates(t.Context(), "k9", jwa.RS256())
	if !strings.Contains(buf.String(), `"trigger":"unknown kid"`) {
		t.Errorf("no unknown-kid refetch failure logged:\n%s", buf.String())
	}
	cancel()
	<-keys.stopped

	out := buf.String()
	wantURL := js.URL + "/keys?redacted"
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["level"] != "WARN" || rec["url"] != wantURL || rec["error"] == nil {
			t.Errorf("log line %v, want level WARN, url %q and an error", rec, wantURL)
		}
	}
	for _, secret := range []string{"hunter2", "s3cr3t", "not-key-material", publicJWK(t, rsaKey, "k1", "RS256")["n"].(string)} {
		if strings.Contains(out, secret) {
			t.Errorf("log holds %q:\n%s", secret, out)
		}
	}
	// The keys held still verify.
	if got := keys.candidates(t.Context(), "k1", jwa.RS256()); len(got) != 1 {
		t.Errorf("k1 candidates = %d after failed refreshes, want 1", len(got))
	}
}

// TestNewJWKSFromURLErrorHidesCredentials: the start-up error names the
// URL without its password or query.
func TestNewJWKSFromURLErrorHidesCredentials(t *testing.T) {
	js := newJWKSServer(t, []byte("nope"))
	js.set([]byte("nope"), http.StatusUnauthorized)
	raw := strings.Replace(js.URL, "http://", "http://svc:hunter2@", 1) + "/keys?api_key=s3cr3t"
	_, err := NewJWKSFromURL(t.Context(), raw, nil, WithJWKSLogger(slog.New(slog.DiscardHandler)))
	if err == nil {
		t.Fatal("NewJWKSFromURL succeeded on a 401")
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("error reveals credentials: %v", err)
	}
	if !strings.Contains(err.Error(), js.URL+"/keys") || !strings.Contains(err.Error(), "401") {
		t.Errorf("error %q, want it to name %s/keys and the status", err, js.URL)
	}
}

func TestWithJWKSRefreshInterval(t *testing.T) {
	testKeys(t)
	js := newJWKSServer(t, jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256")))
	keys, err := NewJWKSFromURL(t.Context(), js.URL, nil, WithJWKSRefreshInterval(5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 30*time.Second, func() error {
		if n := js.fetches.Load(); n < 3 {
			return fmt.Errorf("%d fetches, want background refreshes", n)
		}
		return nil
	})
	_ = keys
}

// TestOpenJWKS: the one source given is opened, its errors prefixed with
// the kind of source; no source, or two, is ErrJWKSSource.
func TestOpenJWKS(t *testing.T) {
	testKeys(t)
	doc := jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"))
	file := writeFile(t, doc)
	url := newJWKSServer(t, doc).URL + "/keys"
	tests := []struct {
		name, path, url string
		wantIs          error  // nil: no error unless wantPrefix
		wantPrefix      string // of the error
	}{
		{name: "file", path: file},
		{name: "URL", url: url},
		{name: "none", wantIs: ErrJWKSSource},
		{name: "both", path: file, url: url, wantIs: ErrJWKSSource},
		{name: "file missing", path: file + ".none", wantIs: os.ErrNotExist, wantPrefix: "JWKS file: "},
		{name: "insecure URL", url: "http://idp.example/keys", wantIs: ErrJWKSInsecureURL, wantPrefix: "JWKS URL: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := OpenJWKS(t.Context(), tt.path, tt.url)
			if tt.wantIs == nil {
				if err != nil || keys == nil || keys.current() == nil {
					t.Fatalf("OpenJWKS = %v, %v; want keys", keys, err)
				}
				return
			}
			if !errors.Is(err, tt.wantIs) || !strings.HasPrefix(err.Error(), tt.wantPrefix) || keys != nil {
				t.Errorf("OpenJWKS = %v, %v; want an error matching %v, starting %q", keys, err, tt.wantIs, tt.wantPrefix)
			}
		})
	}
}
