package accounting

import "github.com/prometheus/client_golang/prometheus"

// The metrics of a Follower (docs/operations.md).
const (
	MetricIndexLag     = "lookup_accounting_index_lag_events"
	MetricIndexApplied = "lookup_accounting_applied_sequence"
)

// Register registers f's metrics with reg: the index lag (messages of the
// audit stream not yet applied, Lag) and the stream sequence applied.
func (f *Follower) Register(reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: MetricIndexLag,
			Help: "Messages of the audit stream the accounting index has not applied yet, as far as lookupd audit serve knows."},
			func() float64 { return float64(f.Lag()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: MetricIndexApplied,
			Help: "Last audit stream sequence applied to the accounting index."},
			func() float64 { return float64(f.applied.Load()) }),
	} {
		if err := reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}
