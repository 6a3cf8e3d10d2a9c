package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lookup/persons/projector"
)

// Projection is what Project runs: a replica.Replica.
type Projection interface {
	Runner
	CaughtUp() <-chan struct{}
	Snapshot(ctx context.Context) (projector.SnapshotInfo, string, error)
	SnapshotEvery(ctx context.Context, interval time.Duration, logger *slog.Logger)
}

// ProjectConfig is how Project runs a projection.
type ProjectConfig struct {
	// UntilCaughtUp stops once the read model has caught up (after a
	// snapshot, with Snapshot), and makes stopping before it an error.
	UntilCaughtUp bool
	Snapshot      bool
	// SnapshotInterval is passed to SnapshotEvery.
	SnapshotInterval time.Duration
	// Progress, when set, shows the progress until its context is done.
	Progress func(ctx context.Context)
	Logger   *slog.Logger
}

// Project runs p alone (the command "lookupd project") until ctx is done,
// or, with cfg.UntilCaughtUp, until the read model has caught up.
func Project(ctx context.Context, p Projection, cfg ProjectConfig) error {
	logger := cfg.Logger
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var caughtUp atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return RunProjector(gctx, p, logger) })
	g.Go(func() error {
		select {
		case <-p.CaughtUp():
			caughtUp.Store(true)
			if cfg.UntilCaughtUp {
				if cfg.Snapshot {
					if _, _, err := p.Snapshot(gctx); err != nil {
						return err
					}
				}
				stop()
			}
		case <-gctx.Done():
		}
		return nil
	})
	g.Go(func() error { p.SnapshotEvery(gctx, cfg.SnapshotInterval, logger); return nil })
	if cfg.Progress != nil {
		g.Go(func() error { cfg.Progress(gctx); return nil })
	}
	err := g.Wait()
	pr := p.Progress()
	if err != nil {
		return err
	}
	if cfg.UntilCaughtUp && !caughtUp.Load() {
		return fmt.Errorf("stopped before the read model caught up: applied sequence %d of %d", pr.AppliedSeq, pr.TargetSeq)
	}
	logger.Info("projector done", "caught_up", caughtUp.Load(), "applied_sequence", pr.AppliedSeq,
		"applied", pr.Applied, "skipped", pr.Skipped, "dead_lettered", pr.DeadLettered)
	return nil
}
