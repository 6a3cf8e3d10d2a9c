package query

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// fakePosition is a Positioner whose applied sequence a test sets; Wait
// polls nothing: it is woken by set.
type fakePosition struct {
	applied atomic.Uint64
	changed chan struct{} // closed by set
	waits   atomic.Int32  // Wait calls
}

func newFakePosition(n uint64) *fakePosition {
	p := &fakePosition{changed: make(chan struct{})}
	p.applied.Store(n)
	return p
}

func (p *fakePosition) Applied() uint64 { return p.applied.Load() }

func (p *fakePosition) Wait(ctx context.Context, n uint64) error {
	p.waits.Add(1)
	if p.applied.Load() >= n {
		return nil
	}
	select {
	case <-p.changed:
		if p.applied.Load() >= n {
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// set moves the position to n (once per test) and wakes the waiters.
func (p *fakePosition) set(n uint64) {
	p.applied.Store(n)
	close(p.changed)
}

func newPositionServer(t *testing.T, pos Positioner, reg prometheus.Registerer, stale func() bool) *Server {
	t.Helper()
	s, err := NewServer(Config{
		Reader: fixtureReader(), Tokens: testVerifier(t, testJWKS(t), ""),
		Now: func() time.Time { return testNow }, Position: pos, MaxPositionWait: 200 * time.Millisecond,
		Registerer: reg, Stale: stale,
	})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	return s
}

func TestLookupPosition(t *testing.T) {
	token := rsaToken(t, goodClaims("read:persons"))
	tests := []struct {
		name       string
		target     string
		token      string
		minPos     []string
		prefer     string
		wantStatus int
		wantType   string // problem type slug, "" for a 2xx
		wantPos    string // Lookup-Position, "" = absent
		wantParam  string // invalid_params name
	}{
		{name: "person", target: "/api/v1/persons/" + consumerA, token: token, wantStatus: 200, wantPos: "42"},
		{name: "signers", target: "/api/v1/authorized-signers?consumer_id=" + consumerA, token: token, wantStatus: 200, wantPos: "42"},
		{name: "not found carries the position", target: "/api/v1/persons/" + consumerNo, token: token, wantStatus: 404, wantType: "not-found", wantPos: "42"},
		{name: "min position applied", target: "/api/v1/persons/" + consumerA, token: token, minPos: []string{"42"}, wantStatus: 200, wantPos: "42"},
		{name: "min position zero", target: "/api/v1/persons/" + consumerA, token: token, minPos: []string{"0"}, wantStatus: 200, wantPos: "42"},
		{name: "min position not reached", target: "/api/v1/persons/" + consumerA, token: token, minPos: []string{"43"},
			wantStatus: 503, wantType: "position-not-reached", wantPos: "42"},
		{name: "prefer wait shorter", target: "/api/v1/authorized-signers?consumer_id=" + consumerA, token: token, minPos: []string{"100"},
			prefer: "respond-async, wait=0", wantStatus: 503, wantType: "position-not-reached", wantPos: "42"},
		{name: "malformed", target: "/api/v1/persons/" + consumerA, token: token, minPos: []string{"x1"},
			wantStatus: 400, wantType: "invalid-parameters", wantParam: hdrMinPosition},
		{name: "negative", target: "/api/v1/authorized-signers?consumer_id=" + consumerA, token: token, minPos: []string{"-1"},
			wantStatus: 400, wantType: "invalid-parameters", wantParam: hdrMinPosition},
		{name: "repeated", target: "/api/v1/persons/" + consumerA, token: token, minPos: []string{"1", "2"},
			wantStatus: 400, wantType: "invalid-parameters", wantParam: hdrMinPosition},
		{name: "authentication first", target: "/api/v1/persons/" + consumerA, minPos: []string{"x"}, wantStatus: 401, wantType: "unauthorized"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pos := newFakePosition(42)
			h := newPositionServer(t, pos, nil, nil)
			req := newRequest(http.MethodGet, tt.target, tt.token)
			for _, v := range tt.minPos {
				req.Header.Add(hdrMinPosition, v)
			}
			if tt.prefer != "" {
				req.Header.Set("Prefer", tt.prefer)
			}
			rec := serve(t, h, req)
			if rec.Code != tt.wantStatus {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body)
			}
			if got := rec.Header().Get(hdrPosition); got != tt.wantPos {
				t.Errorf("Lookup-Position = %q, want %q", got, tt.wantPos)
			}
			if tt.wantType == "" {
				return
			}
			p := decodeProblem(t, rec)
			if want := problemBase + tt.wantType; p.Type != want {
				t.Errorf("type = %q, want %q", p.Type, want)
			}
			if got := rec.Header().Get("Preference-Applied"); tt.prefer != "" && got != "wait=0" {
				t.Errorf("Preference-Applied = %q, want wait=0", got)
			}
			if tt.wantType == "position-not-reached" && rec.Header().Get("Retry-After") != retryAfterPosition {
				t.Errorf("Retry-After = %q, want %q", rec.Header().Get("Retry-After"), retryAfterPosition)
			}
			if tt.wantParam != "" && (len(p.InvalidParams) != 1 || p.InvalidParams[0].Name != tt.wantParam) {
				t.Errorf("invalid_params = %+v, want one named %s", p.InvalidParams, tt.wantParam)
			}
		})
	}
}

// answer is what TestMinPositionWaitsForCommit's request got.
type answer struct {
	code      int
	body, pos string
}

// TestMinPositionWaitsForCommit: a request asking for a position not yet
// applied is answered, with the new state, once it is.
func TestMinPositionWaitsForCommit(t *testing.T) {
	pos := newFakePosition(1)
	reg := prometheus.NewRegistry()
	var name atomic.Value
	name.Store("Old")
	reader := &fakeReader{PersonFunc: func(_ context.Context, id string) (events.Person, error) {
		return events.Person{ID: id, BusinessID: businessA, FirstName: name.Load().(string), LastName: "Lee", Type: events.PersonTypeConsumer}, nil
	}}
	s, err := NewServer(Config{Reader: reader, Tokens: testVerifier(t, testJWKS(t), ""),
		Now: func() time.Time { return testNow }, Position: pos, MaxPositionWait: time.Minute, Registerer: reg})
	if err != nil {
		t.Fatal(err)
	}
	req := newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, rsaToken(t, goodClaims("read:persons")))
	req.Header.Set(hdrMinPosition, "2")
	done := make(chan answer, 1)
	go func() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		done <- answer{rec.Code, rec.Body.String(), rec.Header().Get(hdrPosition)}
	}()
	for pos.waits.Load() == 0 {
		select {
		case r := <-done:
			t.Fatalf("answered %d before the position was applied: %s", r.code, r.body)
		default:
		}
		time.Sleep(time.Millisecond) // until the handler waits: then the commit
	}
	name.Store("New")
	pos.set(2)
	r := <-done
	if r.code != 200 || !strings.Contains(r.body, `"New"`) || r.pos != "2" {
		t.Fatalf("got %d %s Lookup-Position %q, want 200 with the new name at position 2", r.code, r.body, r.pos)
	}
	if got := testutil.ToFloat64(s.fresh.waits.WithLabelValues(waitReached)); got != 1 {
		t.Errorf("reached waits = %v, want 1", got)
	}
}

func TestNoHeaderNoWait(t *testing.T) {
	pos := newFakePosition(7)
	h := newPositionServer(t, pos, nil, nil)
	rec := serve(t, h, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, rsaToken(t, goodClaims("read:persons"))))
	if rec.Code != 200 || pos.waits.Load() != 0 {
		t.Fatalf("status %d, %d waits; want 200 and none", rec.Code, pos.waits.Load())
	}
}

func TestStaleAnswers503(t *testing.T) {
	var stale atomic.Bool
	stale.Store(true)
	h := newPositionServer(t, newFakePosition(3), nil, stale.Load)
	token := rsaToken(t, goodClaims("read:persons"))
	rec := serve(t, h, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, token))
	if rec.Code != 503 || decodeProblem(t, rec).Type != problemBase+"stale" || rec.Header().Get("Retry-After") == "" {
		t.Fatalf("stale: status %d %s, want 503 stale with Retry-After", rec.Code, rec.Body)
	}
	if got := rec.Header().Get(hdrPosition); got != "3" {
		t.Errorf("Lookup-Position = %q, want 3", got)
	}
	stale.Store(false)
	if rec := serve(t, h, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, token)); rec.Code != 200 {
		t.Fatalf("fresh again: status %d, want 200", rec.Code)
	}
}

func TestPreferWait(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   time.Duration
		ok     bool
	}{
		{name: "absent"},
		{name: "wait", values: []string{"wait=1"}, want: time.Second, ok: true},
		{name: "among others", values: []string{"respond-async, WAIT = 3"}, want: 3 * time.Second, ok: true},
		{name: "quoted", values: []string{`wait="2"`}, want: 2 * time.Second, ok: true},
		{name: "second header", values: []string{"return=minimal", "wait=0"}, want: 0, ok: true},
		{name: "malformed ignored", values: []string{"wait=soon"}},
		{name: "negative ignored", values: []string{"wait=-1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(http.MethodGet, "/", nil)
			for _, v := range tt.values {
				r.Header.Add("Prefer", v)
			}
			got, ok := preferWait(r)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("preferWait(%q) = %v, %v; want %v, %v", tt.values, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// BenchmarkHandlersPosition is BenchmarkHandlers/person with and without a
// Positioner (Lookup-Position on the answer, no Lookup-Min-Position): the
// cost of the position on requests that do not wait.
func BenchmarkHandlersPosition(b *testing.B) {
	for _, tc := range []struct {
		name string
		pos  Positioner
	}{{"without", nil}, {"with", newFakePosition(123456789)}} {
		b.Run(tc.name, func(b *testing.B) {
			s := benchServer(b)
			s.fresh.pos = tc.pos
			token := rsaToken(b, goodClaims("read:persons"))
			p, err := s.tokens.VerifyBearer(bearerRequest(b.Context(), token))
			if err != nil {
				b.Fatal(err)
			}
			s.router = s.routes(preVerified(p))
			req := httptest.NewRequest(http.MethodGet, "/api/v1/persons/"+consumerA, nil)
			req.Header.Set("Authorization", "Bearer "+token)
			w := &benchWriter{h: make(http.Header)}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				w.status, w.n = 0, 0
				s.ServeHTTP(w, req)
				if w.status != http.StatusOK {
					b.Fatalf("status %d", w.status)
				}
			}
		})
	}
}
