package admin

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// fakeProgressFunc is a ProgressSource.
type fakeProgressFunc func() projector.Progress

func (f fakeProgressFunc) Progress() projector.Progress { return f() }

func TestReportProgress(t *testing.T) {
	var applied atomic.Uint64
	src := fakeProgressFunc(func() projector.Progress {
		a := applied.Add(10)
		return projector.Progress{AppliedSeq: a, TargetSeq: 1000, StreamLastSeq: 1000, Applied: a, Connected: true}
	})
	t.Run("log lines when not a terminal", func(t *testing.T) {
		var logs testkit.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			ReportProgress(ctx, src, slog.New(slog.NewJSONHandler(&logs, nil)), ProgressConfig{Interval: 5 * time.Millisecond})
			close(done)
		}()
		testkit.WaitFor(t, 10*time.Second, func() error {
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
		var bar, logs testkit.LogBuffer
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			ReportProgress(ctx, src, slog.New(slog.NewJSONHandler(&logs, nil)), ProgressConfig{Bar: true, BarOut: &bar, Interval: time.Hour})
			close(done)
		}()
		testkit.WaitFor(t, 10*time.Second, func() error {
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
