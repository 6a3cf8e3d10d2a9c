package audit

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the Prometheus metrics of a Ledger.
type metrics struct {
	records *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{records: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lookup_audit_records_total",
		Help: "Audit records of disclosures, by outcome: stored (acknowledged by JetStream) or failed.",
	}, []string{"outcome"})}
	m.records.WithLabelValues("stored")
	m.records.WithLabelValues("failed")
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m.records); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if c, ok := are.ExistingCollector.(*prometheus.CounterVec); ok {
				m.records = c
				return m, nil
			}
		}
		return nil, err
	}
	return m, nil
}
