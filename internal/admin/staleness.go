package admin

import (
	"sync/atomic"
	"time"
)

// StalenessCheckInterval is how long a staleness verdict is reused, so that the
// API's requests do not each take the projector's progress lock.
const StalenessCheckInterval = 100 * time.Millisecond

// staleness applies the staleness bound LOOKUP_MAX_STALENESS: the read model
// is stale while its oldest unapplied event, or its loss of the stream, is
// older than the bound.
type staleness struct {
	src     ReadinessSource
	bound   time.Duration
	now     func() time.Time
	checked atomic.Int64 // unix nanoseconds of the last verdict
	verdict atomic.Bool
}

// NewStaleness returns the staleness check of src under bound, or nil when
// bound is 0 (off).
func NewStaleness(src ReadinessSource, bound time.Duration, now func() time.Time) func() bool {
	if bound <= 0 {
		return nil
	}
	s := &staleness{src: src, bound: bound, now: now}
	return s.stale
}

// stale reports whether the read model is beyond the bound, checking the
// projector's progress at most every CheckInterval.
func (s *staleness) stale() bool {
	now := s.now()
	if last := s.checked.Load(); last != 0 && now.UnixNano()-last < int64(StalenessCheckInterval) {
		return s.verdict.Load()
	}
	p := s.src.Progress()
	v := isStale(p.OldestUnappliedTime, p.UnreachableSince, now, s.bound)
	s.verdict.Store(v)
	s.checked.Store(now.UnixNano())
	return v
}

// isStale reports whether the oldest unapplied event (oldest) or the loss
// of the stream (lostSince) is older than bound at now; zero times are
// absent.
func isStale(oldest, lostSince, now time.Time, bound time.Duration) bool {
	return (!oldest.IsZero() && now.Sub(oldest) > bound) || (!lostSince.IsZero() && now.Sub(lostSince) > bound)
}
