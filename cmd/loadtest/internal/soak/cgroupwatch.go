package soak

import (
	"context"
	"time"
)

// CgroupWatch is what a memory cgroup accounted over a while: its
// accounting at the start and at the end, and the peaks of its anonymous
// memory and of all it was charged, sampled.
type CgroupWatch struct {
	First, Last         CgroupStat
	PeakAnon, PeakUsage int64
	Samples             int // Stat calls that succeeded
}

// Refaults are the page cache refaults between the first and last sample.
func (w CgroupWatch) Refaults() uint64 { return w.Last.Refaults - w.First.Refaults }

// WatchCgroup reads c's accounting at once and then every interval until
// ctx ends, and returns what it saw. A failed read is skipped.
func WatchCgroup(ctx context.Context, c *Cgroup, interval time.Duration) CgroupWatch {
	var w CgroupWatch
	take := func(time.Time) {
		s, err := c.Stat()
		if err != nil {
			return
		}
		if w.Samples == 0 {
			w.First = s
		}
		w.Last, w.Samples = s, w.Samples+1
		w.PeakAnon, w.PeakUsage = max(w.PeakAnon, s.Anon), max(w.PeakUsage, s.Usage)
	}
	take(time.Now())
	every(ctx, interval, take)
	return w
}

// every calls fn with the tick's time every interval (the first call one
// interval after it starts) until ctx ends; ticks missed while fn runs
// are dropped, as time.Ticker drops them.
func every(ctx context.Context, interval time.Duration, fn func(now time.Time)) {
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
