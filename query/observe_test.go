package query

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	s, err := NewServer(Config{
		Reader:   fixtureReader(),
		Keys:     testJWKS(t),
		Issuer:   testIssuer,
		Audience: testAudience,
		Logger:   slog.New(slog.NewJSONHandler(&buf, nil)),
		Now:      func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatal(err)
	}
	full := rsaToken(t, goodClaims("read:persons read:persons:ssn"))
	tests := []struct {
		name      string
		method    string
		target    string
		auth      string
		wantRoute string
		wantCode  int
		wantSub   string
		wantLevel string
	}{
		{"signers with full SSN", http.MethodGet, "/api/v1/authorized-signers?consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL",
			"Bearer " + full, "/api/v1/authorized-signers", 200, "client-42", "INFO"},
		{"person", http.MethodHead, "/api/v1/persons/" + consumerA, "Bearer " + full, "/api/v1/persons/{person_id}", 200, "client-42", "INFO"},
		{"refused token", http.MethodGet, "/api/v1/persons/" + consumerA, "Bearer " + tamper(full, len(full)-5), "/api/v1/persons/{person_id}", 401, "", "INFO"},
		{"SSN in an unknown path", http.MethodGet, "/ssn/123-45-6789", "", unmatchedRoute, 404, "", "INFO"},
		{"SSN in a query string", http.MethodGet, "/api/v1/persons/" + consumerA + "?ssn=123-45-6789&dob=1980-01-02", "Bearer " + full, "/api/v1/persons/{person_id}", 400, "client-42", "INFO"},
		{"other method", http.MethodDelete, "/api/v1/persons/" + consumerA, "", unmatchedRoute, 405, "", "INFO"},
		{"reader failure", http.MethodGet, "/api/v1/persons/" + personBoom, "Bearer " + full, "/api/v1/persons/{person_id}", 500, "client-42", "ERROR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(buf.String())
			req := newRequest(tc.method, tc.target, "")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := serve(t, s, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("status = %d, want %d", rec.Code, tc.wantCode)
			}
			lines := strings.Split(strings.TrimSpace(buf.String()[before:]), "\n")
			if len(lines) != 1 {
				t.Fatalf("got %d log lines, want 1: %q", len(lines), lines)
			}
			var rec1 map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &rec1); err != nil {
				t.Fatalf("log line %q: %v", lines[0], err)
			}
			want := map[string]any{
				"level":      tc.wantLevel,
				"msg":        "request",
				"method":     tc.method,
				"route":      tc.wantRoute,
				"status":     float64(tc.wantCode),
				"request_id": rec.Header().Get("X-Request-Id"),
			}
			for k, v := range want {
				if rec1[k] != v {
					t.Errorf("log %s = %v, want %v", k, rec1[k], v)
				}
			}
			if _, ok := rec1["duration"].(float64); !ok {
				t.Errorf("log duration = %v, want a number", rec1["duration"])
			}
			if got, _ := rec1["sub"].(string); got != tc.wantSub {
				t.Errorf("log sub = %q, want %q", got, tc.wantSub)
			}
		})
	}

	// Nothing secret ever reaches the log.
	out := buf.String()
	for _, secret := range []string{full, strings.Split(full, ".")[2], "123456789", "123-45-6789", "987-65-4321", "1980-01-02", "1990-12-31", "ssn=", "dob="} {
		if strings.Contains(out, secret) {
			t.Errorf("log holds %q:\n%s", secret, out)
		}
	}
}

func TestPanicLogHoldsNoPanicValue(t *testing.T) {
	var buf syncBuffer
	s, err := NewServer(Config{Reader: fixtureReader(), Keys: testJWKS(t), Logger: slog.New(slog.NewTextHandler(&buf, nil)),
		Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+personPanic, rsaToken(t, goodClaims("read:persons"))))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status = %d, want 500", rec.Code)
	}
	out := buf.String()
	if !strings.Contains(out, "panic serving request") {
		t.Errorf("panic not logged:\n%s", out)
	}
	if strings.Contains(out, "reader exploded") {
		t.Errorf("log holds the panic value:\n%s", out)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	s, err := NewServer(Config{Reader: fixtureReader(), Keys: testJWKS(t), Registerer: reg, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	read := rsaToken(t, goodClaims("read:persons"))
	for i := 0; i < 3; i++ {
		serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, read))
	}
	serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerNo, read))
	serve(t, s, newRequest(http.MethodHead, "/api/v1/authorized-signers?consumer_id="+consumerA, read))
	for _, p := range []string{"/a", "/b", "/c/" + consumerA} {
		serve(t, s, newRequest(http.MethodGet, p, ""))
	}
	serve(t, s, newRequest("BREW", "/api/v1/persons/"+consumerA, ""))

	tests := []struct {
		route, method, code string
		want                float64
	}{
		{"/api/v1/persons/{person_id}", "GET", "200", 3},
		{"/api/v1/persons/{person_id}", "GET", "404", 1},
		{"/api/v1/authorized-signers", "HEAD", "200", 1},
		{unmatchedRoute, "GET", "404", 3},
		{unmatchedRoute, "OTHER", "405", 1},
	}
	for _, tc := range tests {
		t.Run(tc.route+" "+tc.method+" "+tc.code, func(t *testing.T) {
			c, err := s.metrics.requests.GetMetricWithLabelValues(tc.route, tc.method, tc.code)
			if err != nil {
				t.Fatal(err)
			}
			if got := testutil.ToFloat64(c); got != tc.want {
				t.Errorf("lookup_http_requests_total = %v, want %v", got, tc.want)
			}
		})
	}
	if n := testutil.CollectAndCount(reg, "lookup_http_requests_total"); n != len(tests) {
		t.Errorf("%d request series, want %d (bounded labels)", n, len(tests))
	}
	if n := testutil.CollectAndCount(reg, "lookup_http_request_duration_seconds"); n != 4 {
		t.Errorf("%d duration series, want 4", n)
	}

	// A second server on the same registry shares the collectors.
	s2, err := NewServer(Config{Reader: fixtureReader(), Keys: testJWKS(t), Registerer: reg, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatalf("second NewServer on one registry: %v", err)
	}
	serve(t, s2, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, read))
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("/api/v1/persons/{person_id}", "GET", "200")); got != 4 {
		t.Errorf("shared counter = %v, want 4", got)
	}
}
