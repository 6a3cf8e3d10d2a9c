package main

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/query"
)

// staleCheckInterval is how long a staleness verdict is reused, so that
// the API's requests do not each take the projector's progress lock.
const staleCheckInterval = 100 * time.Millisecond

// staleness applies the staleness bound LOOKUP_MAX_STALENESS: the read model
// is stale while its oldest unapplied event, or its loss of the stream, is
// older than the bound.
type staleness struct {
	src     progressSource
	bound   time.Duration
	now     func() time.Time
	checked atomic.Int64 // unix nanoseconds of the last verdict
	verdict atomic.Bool
}

// newStaleness returns the staleness check of src under bound, or nil when
// bound is 0 (off).
func newStaleness(src progressSource, bound time.Duration, now func() time.Time) func() bool {
	if bound <= 0 {
		return nil
	}
	s := &staleness{src: src, bound: bound, now: now}
	return s.stale
}

// stale reports whether the read model is beyond the bound, checking the
// projector's progress at most every staleCheckInterval.
func (s *staleness) stale() bool {
	now := s.now()
	if last := s.checked.Load(); last != 0 && now.UnixNano()-last < int64(staleCheckInterval) {
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

// Names of the freshness metrics (docs/operations.md, deploy/prometheus).
const (
	metricVisible     = "lookup_projector_publish_to_visible_seconds"
	metricOldestAge   = "lookup_projector_oldest_unapplied_age_seconds"
	metricReady       = "lookup_ready"
	metricPositionWts = "lookup_position_waits_total"
	metricJWKSFailed  = "lookup_jwks_refresh_failures_total"
)

// newVisibleHistogram returns the histogram of publish-to-visible times:
// from an event's JetStream timestamp to the commit that made it visible.
func newVisibleHistogram() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    metricVisible,
		Help:    "Time from an event's JetStream timestamp (publish) to the read model commit that made it visible.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	})
}

// observeSeconds adapts h to projector.Config.ObserveVisible.
func observeSeconds(h prometheus.Observer) func(time.Duration) {
	if h == nil {
		return nil
	}
	return func(d time.Duration) { h.Observe(d.Seconds()) }
}

// newReadyGauge exports /readyz's verdict as 1 or 0.
func newReadyGauge(ready func() bool) prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: metricReady,
		Help: "1 while /readyz answers 200 (caught up, fresh within LOOKUP_MAX_STALENESS, not draining), else 0.",
	}, func() float64 {
		if ready() {
			return 1
		}
		return 0
	})
}

// newJWKSFailures exports the failed refreshes of the JWKS.
func newJWKSFailures(keys *query.JWKS) prometheus.CounterFunc {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: metricJWKSFailed,
		Help: "Failed refreshes of the JWKS URL (background or on an unknown kid); the keys held were kept. Always 0 for a JWKS file.",
	}, func() float64 { return float64(keys.RefreshFailures()) })
}
