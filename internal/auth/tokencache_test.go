package auth

import (
	"crypto/rsa"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// cachedServer is a server with a token cache of size over keys, on clock.
func cachedServer(t *testing.T, keys *JWKS, clock *fakeClock, size int) *Server {
	t.Helper()
	s, err := NewServer(apiConfig{
		Reader: fixtureReader(), Keys: keys, Issuer: testIssuer, Audience: testAudience,
		Registerer: prometheus.NewRegistry(), Now: clock.Now, TokenCacheSize: size,
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// cacheCounts returns the hits, misses and evictions counted so far.
func cacheCounts(s *Server) (hits, misses, evictions float64) {
	m := s.verifier.cache.m
	return testutil.ToFloat64(m.hits), testutil.ToFloat64(m.misses), testutil.ToFloat64(m.evictions)
}

// getPerson answers GET person with token on s, returning the status and
// the WWW-Authenticate challenge.
func getPerson(t *testing.T, s *Server, token string) (int, string) {
	t.Helper()
	rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, token))
	return rec.Code, rec.Header().Get("WWW-Authenticate")
}

func TestTokenCacheHitsAfterFirstVerification(t *testing.T) {
	clock := &fakeClock{now: testNow}
	s := cachedServer(t, testJWKS(t), clock, 10)
	tok := rsaToken(t, goodClaims("read:persons"))
	for i := 0; i < 3; i++ {
		if code, _ := getPerson(t, s, tok); code != 200 {
			t.Fatalf("request %d: status %d, want 200", i, code)
		}
	}
	if hits, misses, _ := cacheCounts(s); hits != 2 || misses != 1 {
		t.Errorf("hits, misses = %v, %v; want 2, 1", hits, misses)
	}
}

// TestTokenCacheRefusesAsFresh: what a fresh verification refuses, the
// cache refuses too, with the same answer; failures are never cached.
func TestTokenCacheRefusesAsFresh(t *testing.T) {
	testKeys(t)
	tests := []struct {
		name    string
		claims  map[string]any
		advance time.Duration // clock moved after the first, accepted, request
		want    int
		desc    string // error_description of a 401
	}{
		{name: "expired while cached", claims: goodClaims("read:persons"), advance: time.Hour + clockSkew, want: 401, desc: errTokenExpired.Error()},
		{name: "expired within skew while cached", claims: goodClaims("read:persons"), advance: time.Hour + clockSkew - time.Second, want: 200},
		{name: "wrong iss", claims: withClaims("read:persons", func(c map[string]any) { c["iss"] = "https://evil.test" }), want: 401, desc: errTokenIssuer.Error()},
		{name: "wrong aud", claims: withClaims("read:persons", func(c map[string]any) { c["aud"] = "other-api" }), want: 401, desc: errTokenAudience.Error()},
		{name: "expired", claims: withClaims("read:persons", func(c map[string]any) { c["exp"] = testNow.Add(-time.Hour).Unix() }), want: 401, desc: errTokenExpired.Error()},
		{name: "nbf in the future", claims: withClaims("read:persons", func(c map[string]any) { c["nbf"] = testNow.Add(time.Hour).Unix() }), want: 401, desc: errTokenNotYetValid.Error()},
		{name: "missing scope", claims: withClaims("", func(c map[string]any) { delete(c, "scope") }), want: 403},
		{name: "exp a string", claims: withClaims("read:persons", func(c map[string]any) { c["exp"] = "2099-01-01T00:00:00Z" }), want: 401, desc: errTokenTimeClaim.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: testNow}
			s := cachedServer(t, testJWKS(t), clock, 10)
			fresh := newTestServer(t, fixtureReader(), "")
			tok := rsaToken(t, tc.claims)
			for i := 0; i < 3; i++ {
				if i == 1 {
					clock.Advance(tc.advance)
				}
				code, chal := getPerson(t, s, tok)
				if i == 0 && tc.advance != 0 {
					if code != 200 {
						t.Fatalf("first request: status %d, want 200", code)
					}
					continue // cached; the clock moves now
				}
				if code != tc.want {
					t.Fatalf("request %d: status %d, want %d", i, code, tc.want)
				}
				if tc.want == 401 && !strings.Contains(chal, `error_description="`+tc.desc+`"`) {
					t.Errorf("request %d: challenge %q, want description %q", i, chal, tc.desc)
				}
				if tc.advance == 0 {
					freshCode, freshChal := getPerson(t, fresh, tok)
					if freshCode != code || freshChal != chal {
						t.Errorf("request %d: cached server %d %q, fresh verification %d %q", i, code, chal, freshCode, freshChal)
					}
				}
			}
			hits, _, _ := cacheCounts(s)
			switch {
			case tc.want == 401 && tc.advance == 0 && hits != 0:
				t.Errorf("a refused token was answered from the cache (%v hits)", hits)
			case tc.want == 403 && hits != 2:
				t.Errorf("hits = %v, want 2 (a valid token without the scope is cached; the scope is checked every time)", hits)
			}
		})
	}
}

// TestTokenCacheKeyRemoved: a token accepted from the cache is refused
// right after its key is removed from the JWKS, and after its key is
// replaced by another under the same kid.
func TestTokenCacheKeyRemoved(t *testing.T) {
	testKeys(t)
	k1, k2 := publicJWK(t, rsaKey, "k1", "RS256"), publicJWK(t, rsaKey2, "k2", "RS256")
	tests := []struct {
		name  string
		after []byte // the JWKS once the key is gone
		desc  string
	}{
		{"key removed", jwksJSON(t, k2), errTokenKey.Error()},
		{"key replaced under its kid", jwksJSON(t, publicJWK(t, rsaKey2, "k1", "RS256"), k2), errTokenSignature.Error()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := newJWKSServer(t, jwksJSON(t, k1, k2))
			clock := &fakeClock{now: testNow}
			keys := js.keys(t, jwksTuning{refresh: time.Hour, minRefetch: time.Minute, now: clock.Now})
			s := cachedServer(t, keys, clock, 10)
			tok := signToken(t, map[string]any{"alg": "RS256", "kid": "k1"}, goodClaims("read:persons"), "RS256", rsaKey)
			other := signToken(t, map[string]any{"alg": "RS256", "kid": "k2"}, goodClaims("read:persons"), "RS256", rsaKey2)
			for i := 0; i < 2; i++ {
				for _, tk := range []string{tok, other} {
					if code, _ := getPerson(t, s, tk); code != 200 {
						t.Fatalf("before the change: status %d, want 200", code)
					}
				}
			}
			if hits, _, _ := cacheCounts(s); hits != 2 {
				t.Fatalf("hits = %v before the change, want 2", hits)
			}
			js.set(tc.after, http.StatusOK)
			if err := keys.refresh(t.Context()); err != nil { // as the background refresh does
				t.Fatal(err)
			}
			code, chal := getPerson(t, s, tok)
			if code != 401 || !strings.Contains(chal, tc.desc) {
				t.Errorf("after the change: %d %q, want 401 %q", code, chal, tc.desc)
			}
			if code, _ := getPerson(t, s, other); code != 200 {
				t.Errorf("the token of the key kept: status %d, want 200", code)
			}
			if hits, _, _ := cacheCounts(s); hits != 3 {
				t.Errorf("hits = %v, want 3 (the kept key's token still cached)", hits)
			}
		})
	}
}

func TestTokenCacheBounded(t *testing.T) {
	clock := &fakeClock{now: testNow}
	s := cachedServer(t, testJWKS(t), clock, 2)
	var toks []string
	for _, sub := range []string{"a", "b", "c"} {
		toks = append(toks, rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["sub"] = sub })))
	}
	for _, tok := range toks {
		getPerson(t, s, tok)
	}
	if n := s.verifier.cache.lru.Len(); n != 2 {
		t.Errorf("entries = %d, want 2", n)
	}
	if _, _, ev := cacheCounts(s); ev != 1 {
		t.Errorf("evictions = %v, want 1", ev)
	}
	// A principal too large for an entry is verified every time.
	huge := make([]string, 0, 200)
	for i := 0; i < 200; i++ {
		huge = append(huge, strings.Repeat("x", 20))
	}
	big := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["scp"] = huge }))
	getPerson(t, s, big)
	getPerson(t, s, big)
	if hits, _, _ := cacheCounts(s); hits != 0 {
		t.Errorf("hits = %v, want 0 (an oversized principal is not cached)", hits)
	}
}

func TestTokenCacheOff(t *testing.T) {
	s := cachedServer(t, testJWKS(t), &fakeClock{now: testNow}, 0)
	if s.verifier.cache != nil {
		t.Fatal("a cache of size 0 exists")
	}
	tok := rsaToken(t, goodClaims("read:persons"))
	for i := 0; i < 2; i++ {
		if code, _ := getPerson(t, s, tok); code != 200 {
			t.Fatalf("status %d, want 200", code)
		}
	}
}

// TestTokenCacheConcurrent runs cached verifications while the key set
// changes underneath (for the race detector), and checks that a token
// whose key left the set is refused once the change is installed.
func TestTokenCacheConcurrent(t *testing.T) {
	testKeys(t)
	k1, k2 := publicJWK(t, rsaKey, "k1", "RS256"), publicJWK(t, rsaKey2, "k2", "RS256")
	js := newJWKSServer(t, jwksJSON(t, k1, k2))
	keys := js.keys(t, jwksTuning{refresh: time.Hour})
	clock := &fakeClock{now: testNow}
	s := cachedServer(t, keys, clock, 100)
	tok := func(kid string, key *rsa.PrivateKey) string {
		return signToken(t, map[string]any{"alg": "RS256", "kid": kid}, goodClaims("read:persons"), "RS256", key)
	}
	t2 := tok("k2", rsaKey2)
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if _, err := s.verifier.verify(t.Context(), t2); err != nil {
					t.Errorf("k2 token: %v", err)
					return
				}
			}
		}()
	}
	for i := 0; i < 5; i++ {
		if err := keys.refresh(t.Context()); err != nil {
			t.Error(err)
		}
	}
	wg.Wait()
	t1 := tok("k1", rsaKey)
	if _, err := s.verifier.verify(t.Context(), t1); err != nil {
		t.Fatalf("k1 token: %v", err)
	}
	js.set(jwksJSON(t, k2), http.StatusOK)
	if err := keys.refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.verifier.verify(t.Context(), t1); !errors.Is(err, errTokenKey) {
		t.Errorf("k1 token after k1 left: %v, want %v", err, errTokenKey)
	}
}

// TestTokenCacheHitAllocatesNothing: a cache hit costs no allocation (the
// hash state is pooled, the key is an array, the principal shared).
func TestTokenCacheHitAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	s := cachedServer(t, testJWKS(t), &fakeClock{now: testNow}, 10)
	tok := rsaToken(t, goodClaims("read:persons"))
	ctx := t.Context()
	if _, err := s.verifier.verify(ctx, tok); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := s.verifier.verify(ctx, tok); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("allocations per cached verification = %v, want 0", allocs)
	}
}
