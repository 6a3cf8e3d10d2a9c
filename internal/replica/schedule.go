package replica

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/lookup/persons/internal/periodic"
)

// SnapshotEvery writes a snapshot every interval once the model has caught
// up, until ctx is done, when a bucket is configured (Config.Snapshots)
// and interval is positive; else it returns at once. Failures are logged
// to logger and counted (the replica's metrics), and retried at the next
// tick.
func (r *Replica) SnapshotEvery(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	if interval <= 0 || r.cfg.Snapshots == nil {
		return
	}
	periodic.Every(ctx, interval, func(time.Time) {
		if _, _, err := r.Snapshot(ctx); err != nil && !errors.Is(err, ErrNotCaughtUp) && ctx.Err() == nil {
			logger.Error("snapshot failed; retrying at the next interval", "err", err, "retry_in", interval)
		}
	})
}

// CompactEvery runs Compact every interval, once the model has caught up,
// but only when the live model has applied a deletion newer than the last
// compaction (LastDeletion() > Compacted().Position), until ctx is done;
// it returns at once when interval is not positive. report, when not nil,
// is called with what each compaction that succeeded recorded. A failure
// is logged to logger and counted (lookup_model_compactions_total), and
// retried at the next tick; a tick while a rebuild or a compaction is
// under way does nothing.
func (r *Replica) CompactEvery(ctx context.Context, interval time.Duration, logger *slog.Logger, report func(CompactionInfo)) {
	if interval <= 0 {
		return
	}
	periodic.Every(ctx, interval, func(time.Time) {
		info, err := r.compactIfDue(ctx)
		if r.compactTicked != nil {
			r.compactTicked(info, err)
		}
		switch {
		case err == nil && !info.At.IsZero() && report != nil:
			report(info)
		case err == nil, ctx.Err() != nil, errors.Is(err, ErrRebuildRunning), errors.Is(err, ErrCompactionRunning):
		default:
			logger.Error("compaction failed; retrying at the next interval", "err", err, "retry_in", interval)
		}
	})
}

// compactIfDue compacts when the model has caught up and has applied a
// deletion since the last compaction; the zero CompactionInfo when it did
// not.
func (r *Replica) compactIfDue(ctx context.Context) (CompactionInfo, error) {
	select {
	case <-r.caughtUp:
	default:
		return CompactionInfo{}, nil
	}
	last, err := r.LastDeletion()
	if err != nil {
		return CompactionInfo{}, err
	}
	// An unreadable record is rewritten by the compaction.
	if done, err := r.Compacted(); err == nil && last <= done.Position {
		return CompactionInfo{}, nil
	}
	return r.Compact(ctx)
}
