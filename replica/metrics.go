package replica

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

// metrics are the Prometheus metrics of a Replica's snapshots, restores
// and rebuilds.
type metrics struct {
	snapshots       *prometheus.CounterVec
	snapshotPos     prometheus.Gauge
	snapshotTime    prometheus.Gauge
	snapshotSeconds prometheus.Gauge
	restores        *prometheus.CounterVec
	rebuilds        *prometheus.CounterVec
	rebuilding      prometheus.Gauge
	rebuildApplied  prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		snapshots: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lookup_snapshots_total",
			Help: "Snapshots of the read model written to the bucket, by outcome: stored or failed."}, []string{"outcome"}),
		snapshotPos: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_snapshot_last_position",
			Help: "Stream sequence of the last snapshot stored."}),
		snapshotTime: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_snapshot_last_success_timestamp_seconds",
			Help: "Unix time of the last snapshot stored."}),
		snapshotSeconds: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_snapshot_last_duration_seconds",
			Help: "How long the last snapshot stored took to write."}),
		restores: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lookup_snapshot_restores_total",
			Help: "Bootstraps of an empty read model, by outcome: restored (from a snapshot), none (no usable snapshot: replayed from the start) or failed."}, []string{"outcome"}),
		rebuilds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "lookup_rebuilds_total",
			Help: "Blue/green rebuilds of the read model, by outcome: swapped or failed."}, []string{"outcome"}),
		rebuilding: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_rebuild_in_progress",
			Help: "1 while a rebuild of the read model is under way."}),
		rebuildApplied: prometheus.NewGauge(prometheus.GaugeOpts{Name: "lookup_rebuild_applied_sequence",
			Help: "Stream sequence the read model being rebuilt has reached."}),
	}
	for _, o := range []string{"stored", "failed"} {
		m.snapshots.WithLabelValues(o)
	}
	for _, o := range []string{"restored", "none", "failed"} {
		m.restores.WithLabelValues(o)
	}
	for _, o := range []string{"swapped", "failed"} {
		m.rebuilds.WithLabelValues(o)
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.snapshots, m.snapshotPos, m.snapshotTime, m.snapshotSeconds,
		m.restores, m.rebuilds, m.rebuilding, m.rebuildApplied} {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(errors.New("replica metrics"), err)
		}
	}
	return m, nil
}

func (m *metrics) snapshotDone(info projector.SnapshotInfo, start time.Time, err error) {
	if err != nil {
		m.snapshots.WithLabelValues("failed").Inc()
		return
	}
	m.snapshots.WithLabelValues("stored").Inc()
	m.snapshotPos.Set(float64(info.Position))
	m.snapshotTime.Set(float64(time.Now().UnixNano()) / 1e9)
	m.snapshotSeconds.Set(time.Since(start).Seconds())
}

func (m *metrics) rebuildDone(err error) {
	m.rebuilding.Set(0)
	if err != nil {
		m.rebuilds.WithLabelValues("failed").Inc()
		return
	}
	m.rebuilds.WithLabelValues("swapped").Inc()
}
