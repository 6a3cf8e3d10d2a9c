// Progress: it shows the progress of a projector while "lookupd
// project" runs: a progress bar when its output is a terminal, else a log
// line every interval.

package lifecycle

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/periodic"
)

// ProgressConfig is how Report shows the progress.
type ProgressConfig struct {
	// Bar shows a progress bar on BarOut instead of log lines.
	Bar    bool
	BarOut io.Writer
	// Interval is the time between log lines.
	Interval time.Duration
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// ReportProgress shows src's progress until ctx is done: a progress bar when
// cfg.Bar, else a log line "projecting" every cfg.Interval.
func ReportProgress(ctx context.Context, src admin.ProgressSource, logger *slog.Logger, cfg ProgressConfig) {
	if cfg.Bar {
		showBar(ctx, src, cfg.BarOut)
		return
	}
	last, lastAt := src.Progress().AppliedSeq, time.Now()
	periodic.Every(ctx, cfg.Interval, func(now time.Time) {
		p := src.Progress()
		rate := float64(p.AppliedSeq-min(last, p.AppliedSeq)) / now.Sub(lastAt).Seconds()
		last, lastAt = p.AppliedSeq, now
		var lag uint64
		if p.StreamLastSeq > p.AppliedSeq {
			lag = p.StreamLastSeq - p.AppliedSeq
		}
		logger.Info("projecting", "applied_sequence", p.AppliedSeq, "target_sequence", p.TargetSeq,
			"lag", lag, "events_per_second", int64(rate), "applied", p.Applied, "skipped", p.Skipped,
			"dead_lettered", p.DeadLettered, "connected", p.Connected, "caught_up", p.CaughtUp)
	})
}

// showBar draws src's progress as a bar on w until ctx is done.
func showBar(ctx context.Context, src admin.ProgressSource, w io.Writer) {
	bar := progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("projecting"),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("events"),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionFullWidth(),
	)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	var total int64 = -1
	update := func() {
		p := src.Progress()
		if target := clampInt64(p.TargetSeq); target > 0 && target != total {
			total = target
			bar.ChangeMax64(total)
		}
		if total > 0 {
			_ = bar.Set64(min(clampInt64(p.AppliedSeq), total))
		}
	}
	for {
		update()
		select {
		case <-ctx.Done():
			update()
			_ = bar.Finish()
			fmt.Fprintln(w)
			return
		case <-t.C:
		}
	}
}

// clampInt64 returns u as an int64, math.MaxInt64 if it does not fit.
func clampInt64(u uint64) int64 {
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}
