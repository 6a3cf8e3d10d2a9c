package main

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lookup/persons/projector"
)

// progressSource is what the admin listener and the metrics need of the
// projector.
type progressSource interface {
	Progress() projector.Progress
	CaughtUp() <-chan struct{}
}

var _ progressSource = (*projector.Projector)(nil)

// readiness decides /readyz: ready once the projector has caught up with
// the stream as it stood at start-up, and until the process starts to shut
// down. Once ready it stays ready while NATS is unreachable (the read model
// it serves is then stale but consistent, which is better than no answer),
// unless a staleness bound is set (LOOKUP_MAX_STALENESS): then it is not
// ready while stale. It is not ready while the NATS server refuses
// lookupd's credentials: that is a fault an operator must fix, not an
// outage to ride out.
type readiness struct {
	src      progressSource
	stale    func() bool // nil: no staleness bound
	nats     *natsHealth // nil: not followed
	draining atomic.Bool
}

// ready reports whether the process should receive traffic.
func (r *readiness) ready() bool {
	if r.draining.Load() || (r.nats != nil && r.nats.refused.Load()) {
		return false
	}
	select {
	case <-r.src.CaughtUp():
		return r.stale == nil || !r.stale()
	default:
		return false
	}
}

// newAdminHandler returns the handler of the admin listener:
//
//	GET /livez          200 while the process runs
//	GET /readyz         200 once caught up (see readiness), else 503; JSON body with the progress
//	GET /metrics        Prometheus exposition of reg
//	GET /debug/pprof/   net/http/pprof, only when pprof is true (LOOKUP_PPROF)
//
// plus the extra handlers (e.g. the dev JWKS), by path. Every answer
// carries X-Content-Type-Options: nosniff, and OPTIONS * is answered as
// the API answers it.
func newAdminHandler(r *readiness, reg *prometheus.Registry, extra map[string]http.Handler, pprof bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		p := r.src.Progress()
		ready := r.ready()
		body := struct {
			Ready         bool   `json:"ready"`
			Draining      bool   `json:"draining,omitempty"`
			AppliedSeq    uint64 `json:"applied_sequence"`
			TargetSeq     uint64 `json:"target_sequence"`
			StreamLastSeq uint64 `json:"stream_last_sequence"`
			Connected     bool   `json:"connected"`
			Stale         bool   `json:"stale,omitempty"`
		}{ready, r.draining.Load(), p.AppliedSeq, p.TargetSeq, p.StreamLastSeq, p.Connected, r.stale != nil && r.stale()}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	for path, h := range extra {
		mux.Handle("GET "+path, h)
	}
	if pprof {
		handlePProf(mux)
	}
	return adminHeaders(mux)
}

// adminHeaders sets X-Content-Type-Options: nosniff on every answer of h,
// and answers OPTIONS * (about the server; http.ServeMux would answer 400)
// with 200 and the methods the admin listener answers.
func adminHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if r.Method == http.MethodOptions && r.RequestURI == "*" {
			w.Header().Set("Allow", "GET, HEAD")
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// projectorCollector exports the projector's progress. It takes one
// Progress snapshot per scrape so that the values agree with each other.
type projectorCollector struct {
	src progressSource
	now func() time.Time

	applied, skipped, deadLettered       *prometheus.Desc
	appliedSeq, streamLastSeq, targetSeq *prometheus.Desc
	lag, age, caughtUp, connected        *prometheus.Desc
	oldestAge                            *prometheus.Desc
}

var _ prometheus.Collector = (*projectorCollector)(nil)

// Names of the projector metrics (documented in the README).
const (
	metricApplied       = "lookup_projector_events_applied_total"
	metricSkipped       = "lookup_projector_events_skipped_total"
	metricDeadLettered  = "lookup_projector_events_dead_lettered_total"
	metricAppliedSeq    = "lookup_projector_applied_sequence"
	metricStreamLastSeq = "lookup_projector_stream_last_sequence"
	metricTargetSeq     = "lookup_projector_target_sequence"
	metricLag           = "lookup_projector_lag_events"
	metricAge           = "lookup_projector_last_event_age_seconds"
	metricCaughtUp      = "lookup_projector_caught_up"
	metricConnected     = "lookup_projector_connected"
)

// deadLetteredHelp says exactly what metricDeadLettered counts: each
// replica counts the invalid events it finds, a rebuild counts them again,
// and the dead-letter stream still holds one copy of each.
const deadLetteredHelp = "Invalid events found by this process since it started (not applied; passed to the dead-letter stream). " +
	"Every replica counts the same invalid events and a rebuild counts them again; the dead-letter stream holds one copy of each."

func newProjectorCollector(src progressSource, now func() time.Time) *projectorCollector {
	d := func(name, help string) *prometheus.Desc { return prometheus.NewDesc(name, help, nil, nil) }
	return &projectorCollector{
		src:           src,
		now:           now,
		applied:       d(metricApplied, "Events applied to the read model since the process started."),
		skipped:       d(metricSkipped, "Events skipped as stale or duplicate (entity version not newer) since the process started."),
		deadLettered:  d(metricDeadLettered, deadLetteredHelp),
		appliedSeq:    d(metricAppliedSeq, "Stream sequence of the last event processed into the read model (its checkpoint)."),
		streamLastSeq: d(metricStreamLastSeq, "Last sequence of the source stream as last seen."),
		targetSeq:     d(metricTargetSeq, "Last sequence of the source stream at start-up: the read model is caught up once it has reached it."),
		lag:           d(metricLag, "Stream sequences not yet processed (stream last sequence minus applied sequence)."),
		age:           d(metricAge, "Age in seconds of the last processed event (by its stream timestamp); 0 until one has been processed."),
		caughtUp:      d(metricCaughtUp, "1 once the read model has caught up with the stream as it stood at start-up."),
		connected:     d(metricConnected, "1 while the projector reaches the stream."),
		oldestAge: d(metricOldestAge, "Age in seconds of the oldest event of the stream not yet applied (by its stream timestamp, "+
			"looked up every refresh interval); 0 when none is pending."),
	}
}

func (c *projectorCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.applied, c.skipped, c.deadLettered, c.appliedSeq,
		c.streamLastSeq, c.targetSeq, c.lag, c.age, c.caughtUp, c.connected, c.oldestAge} {
		ch <- d
	}
}

func (c *projectorCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.src.Progress()
	var lag, age, oldestAge float64
	if p.StreamLastSeq > p.AppliedSeq {
		lag = float64(p.StreamLastSeq - p.AppliedSeq)
	}
	if !p.LastEventTime.IsZero() {
		age = max(0, c.now().Sub(p.LastEventTime).Seconds())
	}
	if !p.OldestUnappliedTime.IsZero() {
		oldestAge = max(0, c.now().Sub(p.OldestUnappliedTime).Seconds())
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
}
