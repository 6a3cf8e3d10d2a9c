package ledger

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Prometheus metrics of a Ledger.
type metrics struct {
	records           *prometheus.CounterVec
	recordsPerMessage prometheus.Histogram
	inFlight          prometheus.Gauge
	commit            prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lookup_audit_records_total",
			Help: "Audit records of disclosures, by outcome: stored (acknowledged by JetStream) or failed.",
		}, []string{"outcome"}),
		recordsPerMessage: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lookup_audit_records_per_message",
			Help:    "Audit records gathered into one message of the audit stream (group commit).",
			Buckets: []float64{1, 2, 5, 10, 20, 50, 100, 200, 500},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "lookup_audit_messages_in_flight",
			Help: "Messages of the audit ledger sent and not yet acknowledged.",
		}),
		commit: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "lookup_audit_commit_seconds",
			Help:    "Time from sending a message of the audit ledger to its acknowledgement.",
			Buckets: []float64{.0005, .001, .002, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5},
		}),
	}
	m.records.WithLabelValues("stored")
	m.records.WithLabelValues("failed")
	if reg == nil {
		return m, nil
	}
	var err error
	if m.records, err = register(reg, m.records); err != nil {
		return nil, err
	}
	if m.recordsPerMessage, err = register(reg, m.recordsPerMessage); err != nil {
		return nil, err
	}
	if m.inFlight, err = register(reg, m.inFlight); err != nil {
		return nil, err
	}
	if m.commit, err = register(reg, m.commit); err != nil {
		return nil, err
	}
	return m, nil
}

// register registers c with reg, or returns the collector of the same
// name already registered (a second Ledger on one registry).
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	if err == nil {
		return c, nil
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if existing, ok := are.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
