package query

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestAccessLog(t *testing.T) {
	var buf testkit.LogBuffer
	s, err := NewServer(Config{
		Reader: fixtureReader(),
		Tokens: testVerifier(t, testJWKS(t), ""),
		Logger: slog.New(slog.NewJSONHandler(&buf, nil)),
		Now:    func() time.Time { return testNow },
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
		requestID string
	}{
		{"signers with full SSN", http.MethodGet, "/api/v1/authorized-signers?consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL",
			"Bearer " + full, "/api/v1/authorized-signers", 200, "client-42", "INFO", ""},
		{"person", http.MethodHead, "/api/v1/persons/" + consumerA, "Bearer " + full, "/api/v1/persons/{person_id}", 200, "client-42", "INFO", ""},
		{"refused token", http.MethodGet, "/api/v1/persons/" + consumerA, "Bearer " + tamper(full, len(full)-5), "/api/v1/persons/{person_id}", 401, "", "INFO", ""},
		{"SSN in an unknown path", http.MethodGet, "/ssn/123-45-6789", "", unmatchedRoute, 404, "", "INFO", ""},
		{"SSN in a query string", http.MethodGet, "/api/v1/persons/" + consumerA + "?ssn=123-45-6789&dob=1980-01-02", "Bearer " + full, "/api/v1/persons/{person_id}", 400, "client-42", "INFO", ""},
		{"other method on a route", http.MethodDelete, "/api/v1/persons/" + consumerA, "", "/api/v1/persons/{person_id}", 405, "", "INFO", ""},
		{"other method on signers", http.MethodPost, "/api/v1/authorized-signers?consumer_id=" + consumerA, "", "/api/v1/authorized-signers", 405, "", "INFO", ""},
		{"other method on an unknown path", http.MethodDelete, "/nowhere", "", unmatchedRoute, 404, "", "INFO", ""},
		{"custom method on an unknown path", "PROPFIND", "/nope", "", unmatchedRoute, 404, "", "INFO", ""},
		{"reader failure", http.MethodGet, "/api/v1/persons/" + personBoom, "Bearer " + full, "/api/v1/persons/{person_id}", 500, "client-42", "ERROR", ""},
		{"bad X-Request-Id on a route", http.MethodGet, "/api/v1/persons/" + consumerA, "Bearer " + full, "/api/v1/persons/{person_id}", 400, "client-42", "INFO", "a b"},
		{"bad X-Request-Id on the document", http.MethodGet, "/openapi.yaml", "", "/openapi.yaml", 400, "", "INFO", "a b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(buf.String())
			req := newRequest(tc.method, tc.target, "")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.requestID != "" {
				req.Header.Set("X-Request-Id", tc.requestID)
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
				"method":     methodLabel(tc.method), // PROPFIND is logged as OTHER
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
	var buf testkit.LogBuffer
	s, err := NewServer(Config{Reader: fixtureReader(), Tokens: testVerifier(t, testJWKS(t), ""), Logger: slog.New(slog.NewTextHandler(&buf, nil)),
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
	s, err := NewServer(Config{Reader: fixtureReader(), Tokens: testVerifier(t, testJWKS(t), ""), Registerer: reg, Now: func() time.Time { return testNow }})
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
		{"/api/v1/persons/{person_id}", "OTHER", "405", 1},
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
	s2, err := NewServer(Config{Reader: fixtureReader(), Tokens: testVerifier(t, testJWKS(t), ""), Registerer: reg, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatalf("second NewServer on one registry: %v", err)
	}
	serve(t, s2, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, read))
	if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("/api/v1/persons/{person_id}", "GET", "200")); got != 4 {
		t.Errorf("shared counter = %v, want 4", got)
	}
}

// TestClientGone: a client whose side of the connection closes while its
// request is served (net/http then cancels the request context) is still
// answered in full, never an empty 200: the handlers run on a context
// without the client's cancellation. The access log records the status
// written, at Info, with client_gone and without an error.
func TestClientGone(t *testing.T) {
	var buf testkit.LogBuffer
	reg := prometheus.NewRegistry()
	// goAway is the client's cancellation, called while the read model
	// is being read; the read model answers unless its context is done.
	var goAway context.CancelFunc
	fix := fixtureReader()
	reader := &fakeReader{
		PersonFunc: func(ctx context.Context, id string) (events.Person, error) {
			goAway()
			if err := ctx.Err(); err != nil {
				return events.Person{}, err
			}
			return fix.PersonFunc(ctx, id)
		},
		SignersFunc: func(ctx context.Context, id string) (events.Person, []events.Signer, error) {
			goAway()
			if err := ctx.Err(); err != nil {
				return events.Person{}, nil, err
			}
			return fix.SignersFunc(ctx, id)
		},
	}
	s, err := NewServer(Config{Reader: reader, Tokens: testVerifier(t, testJWKS(t), ""), Logger: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Registerer: reg, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	read := rsaToken(t, goodClaims("read:persons"))
	for _, target := range []string{"/api/v1/persons/" + consumerA, "/api/v1/authorized-signers?consumer_id=" + consumerA} {
		t.Run(target, func(t *testing.T) {
			before := len(buf.String())
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			goAway = cancel
			req := newRequest(http.MethodGet, target, read).WithContext(ctx)
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" || !strings.HasPrefix(rec.Body.String(), "{") {
				t.Errorf("answer %d %q %q, want a 200 JSON body", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
			var line map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(buf.String()[before:])), &line); err != nil {
				t.Fatalf("log %q: %v", buf.String()[before:], err)
			}
			if line["level"] != "INFO" || line["status"] != float64(200) || line["error"] != nil || line["client_gone"] != true {
				t.Errorf("log line %v, want level INFO, status 200, client_gone, no error", line)
			}
		})
	}
	for code, want := range map[string]float64{"200": 1, "499": 0, "500": 0} {
		if got := testutil.ToFloat64(s.metrics.requests.WithLabelValues("/api/v1/persons/{person_id}", "GET", code)); got != want {
			t.Errorf("%s count = %v, want %v", code, got, want)
		}
	}
}

// TestReaderDeadlineIsAnError: a context error that is not the client's
// cancellation (a deadline of the read model) is still a 500.
func TestReaderDeadlineIsAnError(t *testing.T) {
	reader := &fakeReader{PersonFunc: func(context.Context, string) (events.Person, error) {
		return events.Person{}, context.DeadlineExceeded
	}}
	s := newTestServer(t, reader, "")
	rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, rsaToken(t, goodClaims("read:persons"))))
	if rec.Code != http.StatusInternalServerError {
		t.Errorf("status = %d, want 500", rec.Code)
	}
}
