package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/wait"
	"github.com/lookup/persons/projector"
)

// fakeProgress is a progressSource with function fields.
type fakeProgress struct {
	progress func() projector.Progress
	caughtUp func() <-chan struct{}
}

func (f *fakeProgress) Progress() projector.Progress { return f.progress() }
func (f *fakeProgress) CaughtUp() <-chan struct{}    { return f.caughtUp() }

var _ progressSource = (*fakeProgress)(nil)

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
			r := &readiness{src: src}
			r.draining.Store(tt.draining)
			h := newAdminHandler(r, prometheus.NewRegistry(), nil, false)
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

// wantDeadLetteredHelp is what the dead-lettered counter must say it
// counts: this process's finds, not the dead-letter stream's copies.
const wantDeadLetteredHelp = "Invalid events found by this process since it started (not applied; passed to the dead-letter stream). " +
	"Every replica counts the same invalid events and a rebuild counts them again; the dead-letter stream holds one copy of each."

func TestProjectorCollector(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		p    projector.Progress
		want map[string]float64
	}{
		{
			name: "behind",
			p: projector.Progress{AppliedSeq: 90, StreamLastSeq: 100, TargetSeq: 95, Applied: 80, Skipped: 7,
				DeadLettered: 3, LastEventTime: now.Add(-90 * time.Second), Connected: true},
			want: map[string]float64{metricApplied: 80, metricSkipped: 7, metricDeadLettered: 3, metricAppliedSeq: 90,
				metricStreamLastSeq: 100, metricTargetSeq: 95, metricLag: 10, metricAge: 90, metricCaughtUp: 0, metricConnected: 1, metricOldestAge: 0},
		},
		{
			name: "oldest unapplied event known",
			p: projector.Progress{AppliedSeq: 90, StreamLastSeq: 100, TargetSeq: 95, LastEventTime: now.Add(-90 * time.Second),
				OldestUnappliedTime: now.Add(-30 * time.Second), Connected: true},
			want: map[string]float64{metricApplied: 0, metricSkipped: 0, metricDeadLettered: 0, metricAppliedSeq: 90,
				metricStreamLastSeq: 100, metricTargetSeq: 95, metricLag: 10, metricAge: 90, metricCaughtUp: 0, metricConnected: 1,
				metricOldestAge: 30},
		},
		{
			name: "nothing processed, stream not yet seen",
			p:    projector.Progress{},
			want: map[string]float64{metricApplied: 0, metricSkipped: 0, metricDeadLettered: 0, metricAppliedSeq: 0,
				metricStreamLastSeq: 0, metricTargetSeq: 0, metricLag: 0, metricAge: 0, metricCaughtUp: 0, metricConnected: 0, metricOldestAge: 0},
		},
		{
			name: "stream seen behind the checkpoint: no negative lag or age",
			p:    projector.Progress{AppliedSeq: 10, StreamLastSeq: 8, CaughtUp: true, LastEventTime: now.Add(time.Second)},
			want: map[string]float64{metricApplied: 0, metricSkipped: 0, metricDeadLettered: 0, metricAppliedSeq: 10,
				metricStreamLastSeq: 8, metricTargetSeq: 0, metricLag: 0, metricAge: 0, metricCaughtUp: 1, metricConnected: 0, metricOldestAge: 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			src := &fakeProgress{progress: func() projector.Progress { calls++; return tt.p }}
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(newProjectorCollector(src, func() time.Time { return now }))
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatalf("gather: %v", err)
			}
			got := map[string]float64{}
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					switch {
					case m.GetCounter() != nil:
						got[mf.GetName()] = m.GetCounter().GetValue()
						if !strings.HasSuffix(mf.GetName(), "_total") {
							t.Errorf("counter %s does not end in _total", mf.GetName())
						}
					case m.GetGauge() != nil:
						got[mf.GetName()] = m.GetGauge().GetValue()
					}
				}
			}
			if len(got) != len(tt.want) {
				t.Errorf("got %d metrics, want %d: %v", len(got), len(tt.want), got)
			}
			for name, want := range tt.want {
				if v, ok := got[name]; !ok || v != want {
					t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
				}
			}
			for _, mf := range mfs {
				if mf.GetName() == metricDeadLettered && mf.GetHelp() != wantDeadLetteredHelp {
					t.Errorf("%s help = %q, want %q", metricDeadLettered, mf.GetHelp(), wantDeadLetteredHelp)
				}
			}
			if calls != 1 {
				t.Errorf("Progress called %d times per scrape, want 1 (one consistent snapshot)", calls)
			}
		})
	}
}

func TestReportProgress(t *testing.T) {
	var applied atomic.Uint64
	src := &fakeProgress{progress: func() projector.Progress {
		a := applied.Add(10)
		return projector.Progress{AppliedSeq: a, TargetSeq: 1000, StreamLastSeq: 1000, Applied: a, Connected: true}
	}}
	t.Run("log lines when not a terminal", func(t *testing.T) {
		var logs logtest.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			reportProgress(ctx, src, slog.New(slog.NewJSONHandler(&logs, nil)), projectOptions{interval: 5 * time.Millisecond})
			close(done)
		}()
		wait.For(t, 10*time.Second, func() error {
			if n := strings.Count(logs.String(), `"msg":"projecting"`); n < 2 {
				return fmt.Errorf("%d progress lines", n)
			}
			return nil
		})
		cancel()
		<-done
		for _, want := range []string{`"target_sequence":1000`, `"lag":`, `"events_per_second":`, `"connected":true`} {
			if !strings.Contains(logs.String(), want) {
				t.Errorf("progress lines lack %s:\n%s", want, logs.String())
			}
		}
	})
	t.Run("bar on a terminal", func(t *testing.T) {
		var bar, logs logtest.Buffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			reportProgress(ctx, src, slog.New(slog.NewJSONHandler(&logs, nil)), projectOptions{bar: true, barOut: &bar, interval: time.Hour})
			close(done)
		}()
		wait.For(t, 10*time.Second, func() error {
			if !strings.Contains(bar.String(), "/1000") {
				return fmt.Errorf("bar output %q", bar.String())
			}
			return nil
		})
		cancel()
		<-done
		if logs.String() != "" {
			t.Errorf("log lines with a bar: %s", logs.String())
		}
	})
}

func testAdminHandler(pprof bool) http.Handler {
	src := &fakeProgress{caughtUp: closedChan, progress: func() projector.Progress { return projector.Progress{} }}
	return newAdminHandler(&readiness{src: src}, prometheus.NewRegistry(), nil, pprof)
}

// TestPProfSetting: net/http/pprof is on the admin listener only when
// LOOKUP_PPROF is true; off (the default) its paths are 404.
func TestPProfSetting(t *testing.T) {
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
	if cfg, err := parseConfig(inServe, nil); err != nil || cfg.PProf {
		t.Errorf("pprof %v by default, err %v; want off", cfg.PProf, err)
	}
	if cfg, err := parseConfig(inServe, map[string]string{"LOOKUP_PPROF": "true"}); err != nil || !cfg.PProf {
		t.Errorf("LOOKUP_PPROF=true: pprof %v, err %v", cfg.PProf, err)
	}
	if _, err := parseConfig(inServe, map[string]string{"LOOKUP_PPROF": "yes please"}); err == nil {
		t.Error("LOOKUP_PPROF=yes please accepted")
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

// TestServerOptionsReachTheHandlers: lookupd's HTTP servers hand OPTIONS *
// to their handlers instead of net/http's built-in answer, which lacks
// the headers of every answer.
func TestServerOptionsReachTheHandlers(t *testing.T) {
	var reached atomic.Bool
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(r.RequestURI == "*")
		w.Header().Set("X-Content-Type-Options", "nosniff")
	}), slog.New(slog.DiscardHandler))
	srv.Start()
	defer srv.Close()
	req, err := http.NewRequest(http.MethodOptions, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = "*"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !reached.Load() || !strings.EqualFold(resp.Header.Get("X-Content-Type-Options"), "nosniff") {
		t.Errorf("OPTIONS * did not reach the handler (reached %v, headers %v)", reached.Load(), resp.Header)
	}
}
