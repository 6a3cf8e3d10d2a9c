// Package periodic runs a piece of work at a fixed interval until a
// context ends: the ticker loop that background refreshes, snapshots and
// progress reports share (periodic.go); and the waits of a loop that tries
// again after a failure, the projector's and the accounting follower's
// (backoff.go: Backoff, Sleep).
package periodic

import (
	"context"
	"time"
)

// Every calls fn with the tick's time every interval (the first call one
// interval after Every starts) until ctx is done, and then returns. A call
// that takes longer than interval delays the next one; ticks missed
// meanwhile are dropped, as time.Ticker drops them. interval must be
// positive.
func Every(ctx context.Context, interval time.Duration, fn func(now time.Time)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			fn(now)
		}
	}
}
