package auth

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// benchServerCache is benchServer with a token cache of size entries.
func benchServerCache(b *testing.B, size int) *Server {
	b.Helper()
	s, err := NewServer(apiConfig{
		Reader: fixtureReader(), Keys: testJWKS(b), Issuer: testIssuer, Audience: testAudience,
		Registerer: prometheus.NewRegistry(), Now: func() time.Time { return testNow }, TokenCacheSize: size,
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// benchTokens returns n distinct valid tokens.
func benchTokens(b *testing.B, n int) []string {
	toks := make([]string, n)
	for i := range toks {
		toks[i] = rsaToken(b, withClaims("read:persons", func(c map[string]any) { c["sub"] = "client-" + strconv.Itoa(i) }))
	}
	return toks
}

// personRequests returns one GET person request per token, and a
// function answering one of them (rotating) on s.
func personRequests(b *testing.B, s *Server, tokens []string) func() {
	reqs := make([]*http.Request, len(tokens))
	for i, tok := range tokens {
		reqs[i] = httptest.NewRequest(http.MethodGet, "/api/v1/persons/"+consumerA, nil)
		reqs[i].Header.Set("Authorization", "Bearer "+tok)
		reqs[i].Header.Set("Accept", "application/json")
	}
	// Warm the cache (when there is one) outside the measurement.
	for _, req := range reqs {
		s.ServeHTTP(httptest.NewRecorder(), req)
	}
	i := 0
	return func() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, reqs[i%len(reqs)])
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
		i++
	}
}

// benchGetPerson runs GET person on a server with a cache of size,
// rotating through tokens.
func benchGetPerson(b *testing.B, size int, tokens []string) {
	get := personRequests(b, benchServerCache(b, size), tokens)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		get()
	}
}

// BenchmarkGetPersonTokenCache is GET person with the token cache off and
// on, with one token and with 1,000 distinct tokens in rotation.
func BenchmarkGetPersonTokenCache(b *testing.B) {
	one, many := benchTokens(b, 1), benchTokens(b, 1000)
	b.Run("off", func(b *testing.B) { benchGetPerson(b, 0, one) })
	b.Run("on", func(b *testing.B) { benchGetPerson(b, 10000, one) })
	b.Run("off-1000-tokens", func(b *testing.B) { benchGetPerson(b, 0, many) })
	b.Run("on-1000-tokens", func(b *testing.B) { benchGetPerson(b, 10000, many) })
}

// BenchmarkTokenCacheRatio answers GET person with the cache off and on
// in the same loop (one request each per iteration) and reports on/off
// ratios of the time and of the allocations per request (below 1: the
// cache saves), so that machine load affects both alike.
func BenchmarkTokenCacheRatio(b *testing.B) {
	for _, n := range []int{1, 1000} {
		b.Run(strconv.Itoa(n)+"-tokens", func(b *testing.B) {
			tokens := benchTokens(b, n)
			off := personRequests(b, benchServerCache(b, 0), tokens)
			on := personRequests(b, benchServerCache(b, 10000), tokens)
			offAllocs := testing.AllocsPerRun(200, off)
			onAllocs := testing.AllocsPerRun(200, on)
			var offTime, onTime time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				off()
				t1 := time.Now()
				on()
				onTime += time.Since(t1)
				offTime += t1.Sub(t0)
			}
			b.ReportMetric(float64(offTime.Nanoseconds())/float64(b.N), "off-ns/req")
			b.ReportMetric(float64(onTime.Nanoseconds())/float64(b.N), "on-ns/req")
			b.ReportMetric(float64(onTime)/float64(offTime), "ns-ratio")
			b.ReportMetric(offAllocs, "off-allocs/req")
			b.ReportMetric(onAllocs, "on-allocs/req")
			b.ReportMetric(onAllocs/offAllocs, "allocs-ratio")
		})
	}
}
