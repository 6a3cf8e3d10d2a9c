package replica

import (
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

// metrics are the Prometheus metrics of a Replica's snapshots, restores,
// rebuilds and compactions.
type metrics struct {
	snapshots       *prometheus.CounterVec
	snapshotPos     prometheus.Gauge
	snapshotTime    prometheus.Gauge
	snapshotSeconds prometheus.Gauge
	restores        *prometheus.CounterVec
	rebuilds        *prometheus.CounterVec
	rebuilding      prometheus.Gauge
	rebuildApplied  prometheus.Gauge
	compactions     *prometheus.CounterVec
	compactionTime  prometheus.Gauge
	compactionPos   prometheus.Gauge
	compactionSecs  prometheus.Gauge
}

// newMetrics builds the metrics, with every outcome label present from the
// start, and registers them with reg unless reg is nil.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		snapshots: outcomes("lookup_snapshots_total",
			"Snapshots of the read model written to the bucket, by outcome: stored or failed.", "stored", "failed"),
		snapshotPos:     gauge("lookup_snapshot_last_position", "Stream sequence of the last snapshot stored."),
		snapshotTime:    gauge("lookup_snapshot_last_success_timestamp_seconds", "Unix time of the last snapshot stored."),
		snapshotSeconds: gauge("lookup_snapshot_last_duration_seconds", "How long the last snapshot stored took to write."),
		restores: outcomes("lookup_snapshot_restores_total",
			"Bootstraps of an empty read model, by outcome: restored (from a snapshot), none (no usable snapshot: replayed from the start) or failed.",
			"restored", "none", "failed"),
		rebuilds: outcomes("lookup_rebuilds_total",
			"Blue/green rebuilds of the read model, by outcome: swapped or failed.", "swapped", "failed"),
		rebuilding:     gauge("lookup_rebuild_in_progress", "1 while a rebuild of the read model is under way."),
		rebuildApplied: gauge("lookup_rebuild_applied_sequence", "Stream sequence the read model being rebuilt has reached."),
		compactions: outcomes("lookup_model_compactions_total",
			"Compactions of the read model by copy, by outcome: done (the copy swapped in, the old files deleted) or failed.",
			"done", "failed"),
		compactionTime: gauge("lookup_model_last_compaction_timestamp_seconds",
			"Unix time of the last compaction of the read model (0: none recorded)."),
		compactionPos: gauge("lookup_model_last_compaction_position",
			"Stream sequence the last compaction's copy was taken at: every deletion up to it is gone from the model's files."),
		compactionSecs: gauge("lookup_model_last_compaction_duration_seconds", "How long the last compaction took."),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.snapshots, m.snapshotPos, m.snapshotTime, m.snapshotSeconds,
		m.restores, m.rebuilds, m.rebuilding, m.rebuildApplied,
		m.compactions, m.compactionTime, m.compactionPos, m.compactionSecs} {
		if err := reg.Register(c); err != nil {
			return nil, errors.Join(errors.New("replica metrics"), err)
		}
	}
	return m, nil
}

// gauge returns a gauge of the given name and help.
func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// outcomes returns a counter of the given name and help with the label
// "outcome", each of values present (at 0) from the start.
func outcomes(name, help string, values ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"outcome"})
	for _, o := range values {
		c.WithLabelValues(o)
	}
	return c
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

// compacted sets the gauges of the last compaction to info (as recorded
// in the data directory).
func (m *metrics) compacted(info CompactionInfo) {
	if info.At.IsZero() {
		return
	}
	m.compactionTime.Set(float64(info.At.UnixNano()) / 1e9)
	m.compactionPos.Set(float64(info.Position))
}

func (m *metrics) compactionDone(info CompactionInfo, took time.Duration, err error) {
	if err != nil {
		m.compactions.WithLabelValues("failed").Inc()
		return
	}
	m.compactions.WithLabelValues("done").Inc()
	m.compacted(info)
	m.compactionSecs.Set(took.Seconds())
}
