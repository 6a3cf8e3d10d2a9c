package auth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"

	"github.com/lookup/persons/internal/testing/testkit"
)

// gatedJWKS is a JWKS endpoint that can hold its answers until released,
// to observe what happens while a fetch is in flight.
type gatedJWKS struct {
	*jwksServer
	mu      sync.Mutex
	gate    chan struct{} // nil: answer at once
	entered chan struct{} // receives one value per held fetch
}

func newGatedJWKS(t *testing.T, doc []byte) *gatedJWKS {
	t.Helper()
	g := &gatedJWKS{jwksServer: newJWKSServer(t, doc), entered: make(chan struct{}, 100)}
	inner := g.Config.Handler
	g.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		gate := g.gate
		g.mu.Unlock()
		if gate != nil {
			g.entered <- struct{}{}
			<-gate
		}
		inner.ServeHTTP(w, r)
	})
	return g
}

// gatedK1 returns a gated JWKS endpoint serving the key k1 (rsaKey, RS256).
func gatedK1(t *testing.T) *gatedJWKS {
	t.Helper()
	testKeys(t)
	return newGatedJWKS(t, jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256")))
}

// hold makes fetches wait until the returned release is called.
func (g *gatedJWKS) hold(t *testing.T) (release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	gate := make(chan struct{})
	g.gate = gate
	var once sync.Once
	release = func() {
		once.Do(func() {
			g.mu.Lock()
			g.gate = nil
			g.mu.Unlock()
			close(gate)
		})
	}
	t.Cleanup(release)
	return release
}

// within fails the test if ch does not deliver within a generous bound
// (it bounds a failure only).
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: timed out", what)
	}
	var zero T
	return zero
}

func candidatesAsync(keys *JWKS, ctx context.Context, kid string) <-chan int {
	out := make(chan int, 1)
	go func() { out <- len(keys.candidates(ctx, kid, jwa.RS256())) }()
	return out
}

// TestJWKSNewKeyAfterBackgroundRefresh: a background refresh moments
// before does not delay a key the IdP added since: its first token
// triggers a refetch.
func TestJWKSNewKeyAfterBackgroundRefresh(t *testing.T) {
	testKeys(t)
	js := newJWKSServer(t, jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256")))
	clock := &fakeClock{now: testNow} // stands still: every fetch is "moments before"
	keys := js.keys(t, jwksTuning{refresh: 5 * time.Millisecond, minRefetch: time.Minute, now: clock.Now})
	testkit.WaitFor(t, 30*time.Second, func() error {
		if n := js.fetches.Load(); n < 3 {
			return fmt.Errorf("%d fetches, want background refreshes", n)
		}
		return nil
	})
	js.set(jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"), publicJWK(t, rsaKey2, "k2", "RS256")), http.StatusOK)
	if n := len(keys.candidates(t.Context(), "k2", jwa.RS256())); n != 1 {
		t.Errorf("k2 candidates = %d right after a background refresh, want 1", n)
	}
}

// TestJWKSUnknownKidFetchSingleFlight: one fetch serves every caller
// waiting on an unknown kid; it runs on the set's context, so a caller
// that goes away neither fails it nor waits for it; known kids are
// answered while it is in flight (no lock across the HTTP call).
func TestJWKSUnknownKidFetchSingleFlight(t *testing.T) {
	js := gatedK1(t)
	keys := js.keys(t, jwksTuning{refresh: time.Hour, minRefetch: time.Minute})
	js.set(jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"), publicJWK(t, rsaKey2, "k2", "RS256")), http.StatusOK)
	release := js.hold(t)

	ctx, goAway := context.WithCancel(t.Context())
	first := candidatesAsync(keys, ctx, "k2")
	within(t, js.entered, "the unknown-kid fetch")
	var others []<-chan int
	for i := 0; i < 10; i++ {
		others = append(others, candidatesAsync(keys, t.Context(), "k2"))
	}
	if n := within(t, candidatesAsync(keys, t.Context(), "k1"), "a known kid during the fetch"); n != 1 {
		t.Errorf("k1 candidates during the fetch = %d, want 1", n)
	}
	goAway()
	if n := within(t, first, "the caller that went away"); n != 0 {
		t.Errorf("candidates of the caller that went away = %d, want 0", n)
	}
	release()
	for i, ch := range others {
		if n := within(t, ch, "a waiting caller"); n != 1 {
			t.Errorf("caller %d: k2 candidates = %d, want 1", i, n)
		}
	}
	if n := js.fetches.Load(); n != 2 {
		t.Errorf("fetches = %d, want 2 (start-up and one refetch)", n)
	}
}

// TestJWKSCoolDownFromFetchEnd: the cool-down counts from the end of the
// last unknown-kid fetch, not its start.
func TestJWKSCoolDownFromFetchEnd(t *testing.T) {
	js := gatedK1(t)
	clock := &fakeClock{now: testNow}
	keys := js.keys(t, jwksTuning{refresh: time.Hour, minRefetch: time.Minute, now: clock.Now})
	release := js.hold(t)
	done := candidatesAsync(keys, t.Context(), "x1")
	within(t, js.entered, "the unknown-kid fetch")
	clock.Advance(2 * time.Minute) // a slow fetch
	release()
	within(t, done, "the unknown-kid fetch")
	if n := js.fetches.Load(); n != 2 {
		t.Fatalf("fetches = %d, want 2", n)
	}
	clock.Advance(30 * time.Second)
	keys.candidates(t.Context(), "x2", jwa.RS256())
	if n := js.fetches.Load(); n != 2 {
		t.Errorf("fetches = %d 30s after the last fetch ended, want 2 (cooling down)", n)
	}
	clock.Advance(31 * time.Second)
	keys.candidates(t.Context(), "x3", jwa.RS256())
	if n := js.fetches.Load(); n != 3 {
		t.Errorf("fetches = %d past the cool-down, want 3", n)
	}
}

// TestKeyWithoutKidVerifiesTokenWithKid: a JWKS key without a kid is a
// candidate for a token that names one.
func TestKeyWithoutKidVerifiesTokenWithKid(t *testing.T) {
	testKeys(t)
	bare := publicJWK(t, rsaKey, "", "RS256")
	delete(bare, "kid")
	keys, err := LoadJWKSFile(writeFile(t, jwksJSON(t, bare, publicJWK(t, rsaKey2, "k2", "RS256"))))
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(apiConfig{Reader: fixtureReader(), Keys: keys, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		kid  string
		key  any
		want int
	}{
		{"kid unknown to the set, kid-less key", "idp-key-7", rsaKey, 200},
		{"kid of another key, kid-less key", "k2", rsaKey, 200},
		{"kid unknown, signed by no key of the set", "idp-key-7", mustRSA(t), 401},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tok := signToken(t, map[string]any{"alg": "RS256", "kid": tc.kid}, goodClaims("read:persons"), "RS256", tc.key)
			if code, _ := getPerson(t, s, tok); code != tc.want {
				t.Errorf("status %d, want %d", code, tc.want)
			}
		})
	}
}

// TestJWKSURLMustBeHTTPS: plain http:// only to loopback or when allowed;
// https:// always.
func TestJWKSURLMustBeHTTPS(t *testing.T) {
	testKeys(t)
	doc := jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"))
	plain := newJWKSServer(t, doc)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(doc) }))
	t.Cleanup(tlsSrv.Close)
	// toPlain reaches the plain test server whatever host a URL names.
	toPlain := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, plain.Listener.Addr().String())
	}}}
	tests := []struct {
		name      string
		url       string
		client    *http.Client
		allow     bool
		insecure  bool // the error wraps ErrJWKSInsecureURL
		wantError bool
	}{
		{name: "http to another host", url: "http://idp.example/jwks.json", client: toPlain, insecure: true, wantError: true},
		{name: "http to another host, allowed", url: "http://idp.example/jwks.json", client: toPlain, allow: true},
		{name: "http to loopback", url: plain.URL + "/jwks.json", client: plain.Client()},
		{name: "http to localhost", url: strings.Replace(plain.URL, "127.0.0.1", "localhost", 1), client: plain.Client()},
		{name: "https", url: tlsSrv.URL, client: tlsSrv.Client()},
		{name: "another scheme", url: "ftp://idp.example/jwks.json", client: toPlain, insecure: true, wantError: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newJWKSFromURL(t.Context(), tc.url, tc.client, jwksTuning{allowHTTP: tc.allow})
			if (err != nil) != tc.wantError {
				t.Fatalf("error = %v, want error %v", err, tc.wantError)
			}
			if got := errors.Is(err, ErrJWKSInsecureURL); got != tc.insecure {
				t.Errorf("errors.Is(%v, ErrJWKSInsecureURL) = %v, want %v", err, got, tc.insecure)
			}
		})
	}
}

// TestJWKSRedirectsSameOriginOnly: a redirect within the URL's origin is
// followed; one to another origin (another port here) is refused.
func TestJWKSRedirectsSameOriginOnly(t *testing.T) {
	testKeys(t)
	doc := jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"))
	other := newJWKSServer(t, doc)
	var idp *httptest.Server
	idp = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/moved":
			http.Redirect(w, r, idp.URL+"/jwks.json", http.StatusFound)
		case "/elsewhere":
			http.Redirect(w, r, other.URL+"/jwks.json", http.StatusFound)
		default:
			_, _ = w.Write(doc)
		}
	}))
	t.Cleanup(idp.Close)
	if _, err := NewJWKSFromURL(t.Context(), idp.URL+"/moved", nil); err != nil {
		t.Errorf("same-origin redirect: %v", err)
	}
	_, err := NewJWKSFromURL(t.Context(), idp.URL+"/elsewhere", nil)
	if err == nil || !strings.Contains(err.Error(), errOtherOrigin.Error()) {
		t.Errorf("redirect to another origin: error %v, want %q", err, errOtherOrigin)
	}
	if n := other.fetches.Load(); n != 0 {
		t.Errorf("the other origin was fetched %d times", n)
	}
}

// TestCancelledVerificationIsNotRefused: a request whose client context
// ends while its token waits for a JWKS fetch (net/http cancels it when a
// client half-closes its side) is neither refused as a bad token nor
// answered as an empty success: the handlers run detached from the
// client's cancellation, so once the fetch brings the new key the request
// gets its full answer, and the access log marks it client_gone. The
// verifier itself still honours a cancelled context.
func TestCancelledVerificationIsNotRefused(t *testing.T) {
	js := gatedK1(t)
	keys := js.keys(t, jwksTuning{refresh: time.Hour})
	var buf testkit.LogBuffer
	s, err := NewServer(apiConfig{Reader: fixtureReader(), Keys: keys, Now: func() time.Time { return testNow },
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	release := js.hold(t)
	js.mu.Lock()
	js.doc = jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256"), publicJWK(t, rsaKey, "new", "RS256"))
	js.mu.Unlock()
	tok := signToken(t, map[string]any{"alg": "RS256", "kid": "new"}, goodClaims("read:persons"), "RS256", rsaKey)
	ctx, goAway := context.WithCancel(t.Context())
	req := newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, tok).WithContext(ctx)
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.ServeHTTP(rec, req)
	}()
	within(t, js.entered, "the unknown-kid fetch")
	goAway()
	release()
	within(t, done, "the request")
	if rec.Code != http.StatusOK || rec.Body.Len() == 0 || rec.Header().Get("Content-Type") == "" {
		t.Errorf("answered %d %q %s to a half-closed client, want 200 with a body", rec.Code, rec.Header().Get("WWW-Authenticate"), rec.Body)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String())), &line); err != nil {
		t.Fatalf("log %q: %v", buf.String(), err)
	}
	if line["status"] != float64(200) || line["client_gone"] != true {
		t.Errorf("log line %v, want status 200 and client_gone", line)
	}
	if _, err := s.verifier.verify(ctx, tok); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("verify with a cancelled context: %v, want success or context.Canceled", err)
	}
}

func mustRSA(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestJWKSRefreshFailuresCounted: each failed background refresh counts
// (lookup_jwks_refresh_failures_total), and none while the set answers.
func TestJWKSRefreshFailuresCounted(t *testing.T) {
	testKeys(t)
	js := newJWKSServer(t, jwksJSON(t, publicJWK(t, rsaKey, "k1", "RS256")))
	keys := js.keys(t, jwksTuning{refresh: 5 * time.Millisecond, minRefetch: time.Minute, now: time.Now})
	testkit.WaitFor(t, 30*time.Second, func() error {
		if n := js.fetches.Load(); n < 3 {
			return fmt.Errorf("%d fetches, want background refreshes", n)
		}
		return nil
	})
	if n := keys.RefreshFailures(); n != 0 {
		t.Fatalf("RefreshFailures() = %d while the set answers, want 0", n)
	}
	js.set([]byte("not json"), http.StatusInternalServerError)
	testkit.WaitFor(t, 30*time.Second, func() error {
		if n := keys.RefreshFailures(); n < 2 {
			return fmt.Errorf("RefreshFailures() = %d with the set failing, want 2 or more", n)
		}
		return nil
	})
}
