package admin

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

// fakeProgress is a Source with function fields.
type fakeProgress struct {
	progress func() projector.Progress
	caughtUp func() <-chan struct{}
}

func (f *fakeProgress) Progress() projector.Progress { return f.progress() }
func (f *fakeProgress) CaughtUp() <-chan struct{}    { return f.caughtUp() }

func closedChan() <-chan struct{} { c := make(chan struct{}); close(c); return c }

func TestReadyz(t *testing.T) {
	tests := []struct {
		name     string
		caughtUp bool
		draining bool
		want     int
	}{
		{"catching up", false, false, http.StatusServiceUnavailable},
		{"caught up", true, false, http.StatusOK},
		{"draining", true, true, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeProgress{
				progress: func() projector.Progress {
					return projector.Progress{AppliedSeq: 5, TargetSeq: 9, StreamLastSeq: 10, Connected: true}
				},
				caughtUp: func() <-chan struct{} {
					if tt.caughtUp {
						return closedChan()
					}
					return make(chan struct{})
				},
			}
			r := &Readiness{Source: src}
			r.Draining.Store(tt.draining)
			h := Handler(r, prometheus.NewRegistry(), nil, false)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
			if rec.Code != tt.want {
				t.Errorf("status = %d, want %d", rec.Code, tt.want)
			}
			var body struct {
				Ready      bool   `json:"ready"`
				Draining   bool   `json:"draining"`
				AppliedSeq uint64 `json:"applied_sequence"`
				TargetSeq  uint64 `json:"target_sequence"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("body %q: %v", rec.Body, err)
			}
			if body.Ready != (tt.want == http.StatusOK) || body.Draining != tt.draining || body.AppliedSeq != 5 || body.TargetSeq != 9 {
				t.Errorf("body = %+v", body)
			}
			rec = httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/livez", nil))
			if rec.Code != http.StatusOK {
				t.Errorf("livez = %d, want 200", rec.Code)
			}
		})
	}
}

// TestReadyzStaleness: with a bound, /readyz is 503 while the oldest
// unapplied event is older, and 200 again once it is applied; the check
// is reused for CheckInterval.
func TestReadyzStaleness(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var oldest time.Time
	calls := 0
	src := &fakeProgress{
		progress: func() projector.Progress {
			calls++
			return projector.Progress{AppliedSeq: 5, StreamLastSeq: 9, Connected: true, OldestUnappliedTime: oldest}
		},
		caughtUp: closedChan,
	}
	clock := now
	if NewStaleness(src, 0, func() time.Time { return clock }) != nil {
		t.Fatal("NewStaleness with bound 0 is not nil (off)")
	}
	r := &Readiness{Source: src, Stale: NewStaleness(src, time.Minute, func() time.Time { return clock })}
	h := Handler(r, prometheus.NewRegistry(), nil, false)
	readyz := func() (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/readyz", nil))
		return rec.Code, rec.Body.String()
	}
	oldest = now.Add(-2 * time.Minute)
	if code, body := readyz(); code != http.StatusServiceUnavailable || !strings.Contains(body, `"stale":true`) {
		t.Fatalf("stale: readyz %d %s, want 503 with stale true", code, body)
	}
	oldest = time.Time{}
	if code, _ := readyz(); code != http.StatusServiceUnavailable {
		t.Fatalf("within CheckInterval: readyz %d, want the reused 503", code)
	}
	clock = clock.Add(StalenessCheckInterval)
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("fresh again: readyz %d %s, want 200", code, body)
	}
}

func testAdminHandler(pprof bool) http.Handler {
	src := &fakeProgress{caughtUp: closedChan, progress: func() projector.Progress { return projector.Progress{} }}
	return Handler(&Readiness{Source: src}, prometheus.NewRegistry(), nil, pprof)
}

// TestPProfSetting: net/http/pprof is on the admin listener only when
// LOOKUP_PPROF is true; off (the default) its paths are 404.
func TestPProf(t *testing.T) {
	paths := []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/debug/pprof/symbol"}
	for _, on := range []bool{false, true} {
		h := testAdminHandler(on)
		for _, path := range paths {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			want := http.StatusNotFound
			if on {
				want = http.StatusOK
			}
			if rec.Code != want {
				t.Errorf("pprof %v: GET %s = %d, want %d", on, path, rec.Code, want)
			}
		}
	}
}

// TestPProfProfileBeyondWriteTimeout: a CPU profile longer than the admin
// listener's write timeout is answered (pprof alone refuses it).
func TestPProfProfileBeyondWriteTimeout(t *testing.T) {
	srv := httptest.NewUnstartedServer(testAdminHandler(true))
	srv.Config.WriteTimeout = 500 * time.Millisecond
	srv.Start()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/debug/pprof/profile?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read profile: %v", err)
	}
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("profile = %d with %d bytes: %.200s", resp.StatusCode, len(body), body)
	}
}

// TestAdminHeaders: every admin answer carries X-Content-Type-Options:
// nosniff, and OPTIONS * is answered by the admin listener.
func TestAdminHeaders(t *testing.T) {
	h := testAdminHandler(true)
	for _, path := range []string{"/livez", "/readyz", "/metrics", "/debug/pprof/", "/nope"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options = %q, want nosniff", path, got)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodOptions, "*", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Allow") != "GET, HEAD" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("OPTIONS * = %d, headers %v", rec.Code, rec.Header())
	}
}

// TestNewRegistry: /metrics of the registry shows the Go runtime's and
// the process's metrics.
func TestNewRegistry(t *testing.T) {
	mfs, err := NewRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, mf := range mfs {
		got[mf.GetName()] = true
	}
	for _, want := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if !got[want] {
			t.Errorf("the registry lacks %s", want)
		}
	}
}
