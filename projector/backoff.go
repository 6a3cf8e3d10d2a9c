package projector

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/lookup/persons/internal/periodic"
)

// newBackoff returns the projector's retry policy (periodic.Backoff):
// exponential backoff from 50ms, doubling up to 1s (so that a replica
// catches up within about a second of its broker's return), with ±20%
// jitter. It never gives up by itself; callers stop when their context is
// done.
func newBackoff() *backoff.ExponentialBackOff {
	return periodic.Backoff(50*time.Millisecond, time.Second)
}

// retryForever runs op until it succeeds or ctx is done (then it returns
// ctx's error), waiting between attempts as newBackoff says; notify is
// called with each failure and the wait before the next attempt.
func retryForever(ctx context.Context, op func() error, notify func(err error, wait time.Duration)) error {
	_, err := backoff.Retry(ctx, func() (struct{}, error) { return struct{}{}, op() },
		backoff.WithBackOff(newBackoff()),
		backoff.WithMaxElapsedTime(0),
		backoff.WithNotify(notify))
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool { return periodic.Sleep(ctx, d) }
