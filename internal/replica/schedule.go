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
