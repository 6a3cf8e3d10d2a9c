// The projector's metrics: it exports the projector's progress to Prometheus:
// a collector that reads projector.Progress once per scrape (applied,
// skipped and dead-lettered events, sequences, lag, ages, caught up,
// connected), and the histogram of publish-to-visible times that the
// projector observes (projector.Config.ObserveVisible).

package admin

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

// ProgressSource is what the collector reads: the projector's progress (a
// replica.Replica or a projector.Projector).
type ProgressSource interface {
	Progress() projector.Progress
}

// Names of the freshness metrics (docs/operations.md, deploy/prometheus).
const (
	MetricVisible   = "lookup_projector_publish_to_visible_seconds"
	MetricOldestAge = "lookup_projector_oldest_unapplied_age_seconds"
)

// NewVisibleHistogram returns the histogram of publish-to-visible times:
// from an event's JetStream timestamp to the commit that made it visible.
func NewVisibleHistogram() prometheus.Histogram {
	return prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    MetricVisible,
		Help:    "Time from an event's JetStream timestamp (publish) to the read model commit that made it visible.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
	})
}

// ObserveSeconds adapts h to projector.Config.ObserveVisible.
func ObserveSeconds(h prometheus.Observer) func(time.Duration) {
	if h == nil {
		return nil
	}
	return func(d time.Duration) { h.Observe(d.Seconds()) }
}

// collector exports the projector's progress. It takes one
// Progress snapshot per scrape so that the values agree with each other.
type collector struct {
	src ProgressSource
	now func() time.Time

	applied, skipped, deadLettered       *prometheus.Desc
	appliedSeq, streamLastSeq, targetSeq *prometheus.Desc
	lag, age, caughtUp, connected        *prometheus.Desc
	oldestAge                            *prometheus.Desc
	mirrorCutOff, mirrorLag              *prometheus.Desc
}

var _ prometheus.Collector = (*collector)(nil)

// Names of the projector metrics (docs/operations.md, deploy/prometheus).
const (
	MetricApplied       = "lookup_projector_events_applied_total"
	MetricSkipped       = "lookup_projector_events_skipped_total"
	MetricDeadLettered  = "lookup_projector_events_dead_lettered_total"
	MetricAppliedSeq    = "lookup_projector_applied_sequence"
	MetricStreamLastSeq = "lookup_projector_stream_last_sequence"
	MetricTargetSeq     = "lookup_projector_target_sequence"
	MetricLag           = "lookup_projector_lag_events"
	MetricAge           = "lookup_projector_last_event_age_seconds"
	MetricCaughtUp      = "lookup_projector_caught_up"
	MetricConnected     = "lookup_projector_connected"
	MetricMirrorCutOff  = "lookup_projector_mirror_cut_off_seconds"
	MetricMirrorLag     = "lookup_projector_mirror_lag_events"
)

// deadLetteredHelp says exactly what MetricDeadLettered counts: each
// replica counts the invalid events it finds, a rebuild counts them again,
// and the dead-letter stream still holds one copy of each.
const deadLetteredHelp = "Invalid events found by this process since it started (not applied; passed to the dead-letter stream). " +
	"Every replica counts the same invalid events and a rebuild counts them again; the dead-letter stream holds one copy of each."

// NewProjectorCollector returns the collector of src's progress; now is the clock
// of the ages.
func NewProjectorCollector(src ProgressSource, now func() time.Time) prometheus.Collector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &collector{
		src:           src,
		now:           now,
		applied:       d(MetricApplied, "Events applied to the read model since the process started."),
		skipped:       d(MetricSkipped, "Events skipped as stale or duplicate (entity version not newer) since the process started."),
		deadLettered:  d(MetricDeadLettered, deadLetteredHelp),
		appliedSeq:    d(MetricAppliedSeq, "Stream sequence of the last event processed into the read model (its checkpoint)."),
		streamLastSeq: d(MetricStreamLastSeq, "Last sequence of the source stream as last seen."),
		targetSeq:     d(MetricTargetSeq, "Last sequence of the source stream at start-up: the read model is caught up once it has reached it."),
		lag:           d(MetricLag, "Stream sequences not yet processed (stream last sequence minus applied sequence)."),
		age:           d(MetricAge, "Age in seconds of the last processed event (by its stream timestamp); 0 until one has been processed."),
		caughtUp:      d(MetricCaughtUp, "1 once the read model has caught up with the stream as it stood at start-up."),
		connected:     d(MetricConnected, "1 while the projector reaches the stream."),
		oldestAge: d(MetricOldestAge, "Age in seconds of the oldest event of the stream not yet applied (by its stream timestamp, "+
			"looked up every refresh interval); 0 when none is pending."),
		mirrorCutOff: d(MetricMirrorCutOff, "When the stream read is a mirror (another region's replica): seconds since the mirror has been "+
			"out of step with its origin (cut off, or still copying the backlog of an outage); 0 while in step or not a mirror "+
			"(docs/two-regions.md)."),
		mirrorLag: d(MetricMirrorLag, "When the stream read is a mirror: its lag behind its origin in messages, as the server "+
			"reported it at the last refresh; 0 otherwise."),
	}
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.applied, c.skipped, c.deadLettered, c.appliedSeq,
		c.streamLastSeq, c.targetSeq, c.lag, c.age, c.caughtUp, c.connected, c.oldestAge, c.mirrorCutOff, c.mirrorLag} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	p := c.src.Progress()
	var lag, age, oldestAge, cutOff float64
	if p.StreamLastSeq > p.AppliedSeq {
		lag = float64(p.StreamLastSeq - p.AppliedSeq)
	}
	if !p.LastEventTime.IsZero() {
		age = max(0, c.now().Sub(p.LastEventTime).Seconds())
	}
	if !p.OldestUnappliedTime.IsZero() {
		oldestAge = max(0, c.now().Sub(p.OldestUnappliedTime).Seconds())
	}
	if !p.MirrorCutOffSince.IsZero() {
		cutOff = max(0, c.now().Sub(p.MirrorCutOffSince).Seconds())
	}
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	ch <- prometheus.MustNewConstMetric(c.applied, prometheus.CounterValue, float64(p.Applied))
	ch <- prometheus.MustNewConstMetric(c.skipped, prometheus.CounterValue, float64(p.Skipped))
	ch <- prometheus.MustNewConstMetric(c.deadLettered, prometheus.CounterValue, float64(p.DeadLettered))
	ch <- prometheus.MustNewConstMetric(c.appliedSeq, prometheus.GaugeValue, float64(p.AppliedSeq))
	ch <- prometheus.MustNewConstMetric(c.streamLastSeq, prometheus.GaugeValue, float64(p.StreamLastSeq))
	ch <- prometheus.MustNewConstMetric(c.targetSeq, prometheus.GaugeValue, float64(p.TargetSeq))
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, lag)
	ch <- prometheus.MustNewConstMetric(c.age, prometheus.GaugeValue, age)
	ch <- prometheus.MustNewConstMetric(c.caughtUp, prometheus.GaugeValue, b(p.CaughtUp))
	ch <- prometheus.MustNewConstMetric(c.connected, prometheus.GaugeValue, b(p.Connected))
	ch <- prometheus.MustNewConstMetric(c.oldestAge, prometheus.GaugeValue, oldestAge)
	ch <- prometheus.MustNewConstMetric(c.mirrorCutOff, prometheus.GaugeValue, cutOff)
	ch <- prometheus.MustNewConstMetric(c.mirrorLag, prometheus.GaugeValue, float64(p.MirrorLag))
}
