// Readiness: it decides whether a replica should receive traffic
// (/readyz, the lookup_ready gauge) and whether its read model is stale
// beyond the bound LOOKUP_MAX_STALENESS (docs/decisions/0011-readiness.md).

package admin

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

// ReadinessSource is what readiness needs of the projector (a replica.Replica).
type ReadinessSource interface {
	Progress() projector.Progress
	CaughtUp() <-chan struct{}
}

var _ ReadinessSource = (*projector.Projector)(nil)

// Readiness decides /readyz: ready once the projector has caught up with
// the stream as it stood at start-up, and until the process starts to shut
// down (Draining). Once ready it stays ready while NATS is unreachable (the
// read model it serves is then stale but consistent, which is better than
// no answer), unless a staleness bound is set (Stale): then it is not
// ready while stale. It is not ready while the NATS server refuses the
// process's credentials (Refused): that is a fault an operator must fix,
// not an outage to ride out.
type Readiness struct {
	Source   ReadinessSource
	Stale    func() bool // nil: no staleness bound
	Refused  func() bool // nil: not followed
	Draining atomic.Bool
}

// Ready reports whether the process should receive traffic.
func (r *Readiness) Ready() bool {
	if r.Draining.Load() || (r.Refused != nil && r.Refused()) {
		return false
	}
	select {
	case <-r.Source.CaughtUp():
		return !r.IsStale()
	default:
		return false
	}
}

// IsStale reports whether the read model is beyond the staleness bound
// (false without one).
func (r *Readiness) IsStale() bool { return r.Stale != nil && r.Stale() }

// MetricReady is the name of the gauge of Gauge.
const MetricReady = "lookup_ready"

// Gauge exports r's verdict as 1 or 0.
func (r *Readiness) Gauge() prometheus.GaugeFunc {
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: MetricReady,
		Help: "1 while /readyz answers 200 (caught up, fresh within LOOKUP_MAX_STALENESS, not draining), else 0.",
	}, func() float64 {
		if r.Ready() {
			return 1
		}
		return 0
	})
}

// CaughtUp reports whether src has caught up with the stream as it stood
// at start-up.
func CaughtUp(src ReadinessSource) bool {
	select {
	case <-src.CaughtUp():
		return true
	default:
		return false
	}
}
