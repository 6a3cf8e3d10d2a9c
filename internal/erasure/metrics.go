package erasure

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

// metrics are the eraser's: no label holds an id.
type metrics struct {
	leader   prometheus.Gauge
	entities *prometheus.CounterVec
	erased   *prometheus.CounterVec
	failures prometheus.Counter
	waiting  prometheus.Gauge
	oldest   *prometheus.GaugeVec
	lag      prometheus.Histogram
	bound    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_erasure_leader",
			Help: "1 while this replica holds the erasure lease (exactly one replica should)."}),
		entities: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lookup_erasure_entities_total",
			Help: "Deletions erased from the stream and the dead letters, by entity kind."}, []string{"kind"}),
		erased: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lookup_erasure_erased_total",
			Help: "What the erasure removed, by place: stream and dead_letters (messages), snapshots (objects)."}, []string{"place"}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{Name: "lookup_erasure_failures_total",
			Help: "Erasure passes that failed (retried at the next poll)."}),
		waiting: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_erasure_pending",
			Help: "Deletions applied but not yet erased from the stream (on the lease holder)."}),
		oldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "lookup_erasure_oldest_pending_seconds",
			Help: "Age of the oldest deletion not yet erased from a place: stream (and dead letters), snapshots; 0 when none waits."},
			[]string{"place"}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "lookup_erasure_stream_seconds",
			Help:    "From a deletion's stream time to its erasure from the stream and the dead letters.",
			Buckets: []float64{1, 5, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600}}),
		bound: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_erasure_bound_seconds",
			Help: "LOOKUP_ERASURE_DELAY: the bound within which a deletion is erased from every place."}),
	}
	for _, p := range []string{"stream", "dead_letters", "snapshots"} {
		m.erased.WithLabelValues(p)
	}
	for _, p := range []string{"stream", "snapshots", "model"} {
		m.oldest.WithLabelValues(p)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.leader, m.entities, m.erased, m.failures, m.waiting, m.oldest, m.lag, m.bound} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// pending sets the gauges of what waits: the deletions read after the
// cursor, and the snapshots since they became due.
func (m *metrics) pending(waiting []projector.Deletion, cur cursor, now time.Time) {
	m.waiting.Set(float64(len(waiting)))
	age := 0.0
	if len(waiting) > 0 && !waiting[0].Time.IsZero() {
		age = now.Sub(waiting[0].Time).Seconds()
	}
	m.oldest.WithLabelValues("stream").Set(age)
	age = 0
	if !cur.SnapshotsDue.IsZero() {
		age = now.Sub(cur.SnapshotsDue).Seconds()
	}
	m.oldest.WithLabelValues("snapshots").Set(age)
}
