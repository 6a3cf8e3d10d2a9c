package query

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics are the Prometheus metrics of the API.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec

	// series caches the children of the vectors by label values, so that
	// a request looks them up without allocating (WithLabelValues hashes
	// a fresh slice and formats the code). It is copied on write: the
	// label values are bounded (routes, methods, statuses), so it soon
	// stops changing.
	series atomic.Pointer[map[seriesKey]seriesHandles]
	mu     sync.Mutex // serialises writers of series
}

type seriesKey struct {
	route, method string
	code          int
}

type seriesHandles struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lookup_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lookup_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
	}
	m.series.Store(&map[seriesKey]seriesHandles{})
	if reg == nil {
		return m, nil
	}
	var err error
	if m.requests, err = registerOrReuse(reg, m.requests); err != nil {
		return nil, err
	}
	if m.duration, err = registerOrReuse(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

// registerOrReuse registers c, or returns the equal collector already
// registered (two servers may share one registry).
func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

func (m *httpMetrics) observe(route, method string, status int, d time.Duration) {
	h := m.handles(seriesKey{route, method, status})
	h.requests.Inc()
	h.duration.Observe(d.Seconds())
}

// handles returns the series of k, creating them on first use.
func (m *httpMetrics) handles(k seriesKey) seriesHandles {
	if h, ok := (*m.series.Load())[k]; ok {
		return h
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.series.Load()
	if h, ok := old[k]; ok {
		return h
	}
	h := seriesHandles{
		requests: m.requests.WithLabelValues(k.route, k.method, strconv.Itoa(k.code)),
		duration: m.duration.WithLabelValues(k.route, k.method),
	}
	next := make(map[seriesKey]seriesHandles, len(old)+1)
	for key, v := range old {
		next[key] = v
	}
	next[k] = h
	m.series.Store(&next)
	return h
}
