package auth

import "github.com/prometheus/client_golang/prometheus"

// MetricJWKSRefreshFailures is the name of the counter of
// JWKS.FailuresCounter.
const MetricJWKSRefreshFailures = "lookup_jwks_refresh_failures_total"

// FailuresCounter exports the failed refreshes of k (RefreshFailures).
func (k *JWKS) FailuresCounter() prometheus.CounterFunc {
	return prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: MetricJWKSRefreshFailures,
		Help: "Failed refreshes of the JWKS URL (background or on an unknown kid); the keys held were kept. Always 0 for a JWKS file.",
	}, func() float64 { return float64(k.RefreshFailures()) })
}
