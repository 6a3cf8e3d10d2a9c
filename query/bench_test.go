package query

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// benchServer is a server as lookupd runs it: metrics registered, access
// log written as JSON (to io.Discard).
func benchServer(b *testing.B) *Server {
	b.Helper()
	s, err := NewServer(Config{
		Reader:     fixtureReader(),
		Tokens:     testVerifier(b, testJWKS(b), ""),
		Logger:     slog.New(slog.NewJSONHandler(io.Discard, nil)),
		Registerer: prometheus.NewRegistry(),
		Now:        func() time.Time { return testNow },
	})
	if err != nil {
		b.Fatal(err)
	}
	return s
}

func benchRequest(b *testing.B, s *Server, target, token string) {
	b.Helper()
	req := httptest.NewRequest(http.MethodGet, target, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

// BenchmarkGetPerson is GET /api/v1/persons/{id} with a real RS256 token.
func BenchmarkGetPerson(b *testing.B) {
	s := benchServer(b)
	benchRequest(b, s, "/api/v1/persons/"+consumerA, rsaToken(b, goodClaims("read:persons")))
}

// BenchmarkGetSigners is GET /api/v1/authorized-signers for a consumer
// with 5 signers, expand=PROTECTED_PERSONAL_DATA and ssn_mode=LAST4.
func BenchmarkGetSigners(b *testing.B) {
	s := benchServer(b)
	benchRequest(b, s, "/api/v1/authorized-signers?consumer_id="+consumerA+"&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4",
		rsaToken(b, goodClaims("read:persons")))
}

// BenchmarkVerifyToken is the token verification alone (RS256, 2048-bit
// key), the share of the handler benchmarks spent on authentication.
func BenchmarkVerifyToken(b *testing.B) {
	s := benchServer(b)
	token := rsaToken(b, goodClaims("read:persons"))
	req := bearerRequest(b.Context(), token)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.tokens.VerifyBearer(req); err != nil {
			b.Fatal(err)
		}
	}
}

// benchTargets are the requests of the benchmarks that compare a request
// with a part of its work: a person, and five signers with protected data.
var benchTargets = []struct{ name, target string }{
	{"person", "/api/v1/persons/" + consumerA},
	{"signers5-expand-last4", "/api/v1/authorized-signers?consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4"},
}

// BenchmarkVerifyShare measures, in the same loop, a whole request and the
// verification of its token alone, and reports verification's share of
// the request time (verify-%), so that machine load affects both alike.
func BenchmarkVerifyShare(b *testing.B) {
	for _, tc := range benchTargets {
		b.Run(tc.name, func(b *testing.B) {
			s := benchServer(b)
			token := rsaToken(b, goodClaims("read:persons"))
			req := httptest.NewRequest(http.MethodGet, tc.target, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			verifyReq := bearerRequest(b.Context(), token)
			var verify, whole time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				if _, err := s.tokens.VerifyBearer(verifyReq); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				t2 := time.Now()
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d", rec.Code)
				}
				verify += t1.Sub(t0)
				whole += t2.Sub(t1)
			}
			b.ReportMetric(100*float64(verify)/float64(whole), "verify-%")
			b.ReportMetric(float64(whole.Nanoseconds())/float64(b.N), "request-ns")
		})
	}
}

// benchWriter is a ResponseWriter that keeps nothing: its header map is
// cleared, not replaced, between requests (net/http's own per-request
// allocations are not the handler's).
type benchWriter struct {
	h      http.Header
	status int
	n      int
}

func (w *benchWriter) Header() http.Header  { return w.h }
func (w *benchWriter) WriteHeader(code int) { w.status = code }
func (w *benchWriter) Write(b []byte) (int, error) {
	w.n += len(b)
	return len(b), nil
}

// preVerified is an authentication middleware that accepts every request
// as p, as a cache hit of a verified token would, without the cost of the
// verification itself.
func preVerified(p Principal) authMiddleware {
	return func(func(*http.Request) bool) func(http.Handler) http.Handler {
		return func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if info := infoFrom(r.Context()); info != nil {
					info.subject = p.Subject()
				}
				next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
			})
		}
	}
}

// BenchmarkHandlers is both operations through every middleware (routing,
// access log, metrics, parameters, the encoding of the answer) with the
// token's principal already verified: the allocations of a request whose
// token is found in a cache. The read model is the in-memory fixture.
func BenchmarkHandlers(b *testing.B) {
	for _, tc := range benchTargets {
		b.Run(tc.name, func(b *testing.B) {
			s := benchServer(b)
			token := rsaToken(b, goodClaims("read:persons"))
			p, err := s.tokens.VerifyBearer(bearerRequest(b.Context(), token))
			if err != nil {
				b.Fatal(err)
			}
			s.router = s.routes(preVerified(p))
			req := httptest.NewRequest(http.MethodGet, tc.target, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept", "application/json")
			w := &benchWriter{h: make(http.Header)}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				clear(w.h)
				w.status, w.n = 0, 0
				s.ServeHTTP(w, req)
				if w.status != http.StatusOK || w.n == 0 {
					b.Fatalf("status %d, %d bytes", w.status, w.n)
				}
			}
		})
	}
}

// BenchmarkParseSignersQuery is the query check of Get Authorized
// Signers alone, consumer_id in lower case, in upper case (lower-cased,
// one allocation) and invalid.
func BenchmarkParseSignersQuery(b *testing.B) {
	for _, tc := range []struct{ name, raw string }{
		{"lower", "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4"},
		{"upper", "consumer_id=" + strings.ToUpper(consumerA) + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4"},
		{"invalid", "consumer_id=" + consumerA[:35] + "g&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				parseSignersQuery(tc.raw)
			}
		})
	}
}
