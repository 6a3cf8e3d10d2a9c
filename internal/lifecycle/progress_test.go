package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// fakeProgressFunc is a admin.ProgressSource.
type fakeProgressFunc func() projector.Progress

func (f fakeProgressFunc) Progress() projector.Progress { return f() }

func TestReportProgress(t *testing.T) {
	// Each call of Progress has applied ten more events.
	newSource := func() admin.ProgressSource {
		var applied atomic.Uint64
		return fakeProgressFunc(func() projector.Progress {
			a := applied.Add(10)
			return projector.Progress{AppliedSeq: a, TargetSeq: 1000, StreamLastSeq: 1000, Applied: a, Connected: true}
		})
	}
	t.Run("log lines when not a terminal", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var logs testkit.LogBuffer
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan struct{})
			go func() {
				ReportProgress(ctx, newSource(), slog.New(slog.NewJSONHandler(&logs, nil)), ProgressConfig{Interval: time.Second})
				close(done)
			}()
			time.Sleep(time.Second - time.Nanosecond)
			synctest.Wait()
			if n := strings.Count(logs.String(), `"msg":"projecting"`); n != 0 {
				t.Fatalf("%d progress lines before the first interval had passed:\n%s", n, logs.String())
			}
			time.Sleep(time.Second + time.Nanosecond)
			synctest.Wait()
			if n := strings.Count(logs.String(), `"msg":"projecting"`); n != 2 {
				t.Fatalf("%d progress lines after two intervals, want 2:\n%s", n, logs.String())
			}
			cancel()
			<-done
			// Ten events applied between two calls a second apart.
			for _, want := range []string{`"target_sequence":1000`, `"lag":970`, `"events_per_second":10,`, `"connected":true`} {
				if !strings.Contains(logs.String(), want) {
					t.Errorf("progress lines lack %s:\n%s", want, logs.String())
				}
			}
		})
	})
	t.Run("bar on a terminal", func(t *testing.T) {
		// On the wall clock: the bar's library leaves a goroutine behind
		// until its next spinner tick, which a synctest bubble refuses.
		var bar, logs testkit.LogBuffer
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() {
			ReportProgress(ctx, newSource(), slog.New(slog.NewJSONHandler(&logs, nil)), ProgressConfig{Bar: true, BarOut: &bar, Interval: time.Hour})
			close(done)
		}()
		testkit.WaitFor(t, 60*time.Second, func() error {
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
