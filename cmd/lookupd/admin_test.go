package main

import (
	"context"
	"encoding/json"
	"fmt"
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
