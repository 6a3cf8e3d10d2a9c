package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/readiness"
	"github.com/lookup/persons/internal/wait"
	"github.com/lookup/persons/projector"
)

// fakeProgress is a readiness.Source with function fields.
type fakeProgress struct {
	progress func() projector.Progress
	caughtUp func() <-chan struct{}
}

func (f *fakeProgress) Progress() projector.Progress { return f.progress() }
func (f *fakeProgress) CaughtUp() <-chan struct{}    { return f.caughtUp() }

var _ readiness.Source = (*fakeProgress)(nil)

func closedChan() <-chan struct{} { c := make(chan struct{}); close(c); return c }

// TestPProfSetting: LOOKUP_PPROF is off by default, on with true, and
// refuses anything but a boolean.
func TestPProfSetting(t *testing.T) {
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
