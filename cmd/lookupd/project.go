package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/sync/errgroup"

	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/periodic"
	"github.com/lookup/persons/internal/projectormetrics"
	"github.com/lookup/persons/projector"
)

func cmdProject(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := newCommand(inProject, "project", `
Runs the projector alone: it applies the events of the stream to the read
model in --data-dir, resuming from its checkpoint, until stopped (SIGTERM or
SIGINT). With --until-caught-up it exits 0 as soon as the read model has
reached the end of the stream as it stood at start-up: use it to build or
rebuild a read model before "lookupd serve" opens it. Progress shows as a
bar when stderr is a terminal, else as a log line every --progress-interval.
With --snapshot-bucket, an empty read model is first restored from the
newest snapshot of the stream, snapshots are written every
--snapshot-interval, and --until-caught-up writes one before it exits.`, getenv)
	if err != nil {
		return err
	}
	until := c.fs.BoolLong("until-caught-up", "exit 0 once the read model has reached the end of the stream")
	every := positiveDuration(c.fs, "progress-interval", 5*time.Second, "interval of progress log lines (when stderr is not a terminal)")
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	return project(ctx, c.cfg, newLogger(c.cfg, stderr), projectOptions{
		untilCaughtUp: *until,
		interval:      *every,
		bar:           isTerminal(stderr),
		barOut:        stderr,
	})
}

type projectOptions struct {
	untilCaughtUp bool
	interval      time.Duration // between progress log lines
	bar           bool          // show a progress bar on barOut instead of log lines
	barOut        io.Writer
}

// project runs the projector until ctx is done, or, with
// opts.untilCaughtUp, until the read model has caught up. In that mode it
// returns an error when stopped before catching up.
func project(ctx context.Context, cfg config, logger *slog.Logger, opts projectOptions) (err error) {
	logger.Info("starting lookupd project", "version", version, "nats_url", redactURLs(cfg.NATSURL), "stream", cfg.Stream,
		"data_dir", cfg.DataDir, "encrypted", cfg.EncryptionKeyFile != "", "until_caught_up", opts.untilCaughtUp)
	nc, js, err := connectJetStream(cfg, logger, nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	rep, err := openReplica(cfg, js, nil, logger, projector.Config{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeReplica(rep, logger)) }()

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var caughtUp atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return lifecycle.RunProjector(gctx, rep, logger) })
	g.Go(func() error {
		select {
		case <-rep.CaughtUp():
			caughtUp.Store(true)
			if opts.untilCaughtUp {
				if cfg.SnapshotBucket != "" {
					_, _, serr := rep.Snapshot(gctx)
					if serr != nil {
						return serr
					}
				}
				stop()
			}
		case <-gctx.Done():
		}
		return nil
	})
	g.Go(func() error { rep.SnapshotEvery(gctx, cfg.SnapshotInterval, logger); return nil })
	g.Go(func() error {
		reportProgress(gctx, rep, logger, opts)
		return nil
	})
	err = g.Wait()
	p := rep.Progress()
	if err != nil {
		return err
	}
	if opts.untilCaughtUp && !caughtUp.Load() {
		return fmt.Errorf("stopped before the read model caught up: applied sequence %d of %d", p.AppliedSeq, p.TargetSeq)
	}
	logger.Info("projector done", "caught_up", caughtUp.Load(), "applied_sequence", p.AppliedSeq,
		"applied", p.Applied, "skipped", p.Skipped, "dead_lettered", p.DeadLettered)
	return nil
}

// reportProgress shows the projector's progress until ctx is done: a
// progress bar when opts.bar, else a log line every opts.interval.
func reportProgress(ctx context.Context, src projectormetrics.Source, logger *slog.Logger, opts projectOptions) {
	if opts.bar {
		bar := progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(opts.barOut),
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
				fmt.Fprintln(opts.barOut)
				return
			case <-t.C:
			}
		}
	}
	last, lastAt := src.Progress().AppliedSeq, time.Now()
	periodic.Every(ctx, opts.interval, func(now time.Time) {
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

// clampInt64 returns u as an int64, math.MaxInt64 if it does not fit.
func clampInt64(u uint64) int64 {
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}
