package periodic

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// Backoff returns the retry policy of a loop that tries again after a
// failure (the projector's session, the accounting's follower):
// exponential backoff from initial, doubling up to ceiling, with ±20% jitter so
// that replicas restarted together do not retry in step. It never gives up
// by itself (its MaxElapsedTime is not consulted by NextBackOff); callers
// stop when their context is done, and Reset it when they make progress.
func Backoff(initial, ceiling time.Duration) *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     initial,
		RandomizationFactor: 0.2,
		Multiplier:          2,
		MaxInterval:         ceiling,
	}
	b.Reset()
	return b
}

// Sleep waits d or until ctx is done; it reports whether d elapsed.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
