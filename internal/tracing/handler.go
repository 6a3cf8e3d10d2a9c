package tracing

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
)

// Handler returns h recording a span per request when tracing is on (an
// incoming W3C traceparent is the span's parent), named by the method and
// route(r), the route pattern, never by an id; else h itself: no cost
// when off. operation names the handler's spans' instrumentation.
func (t *Tracing) Handler(h http.Handler, operation string, route func(*http.Request) string) http.Handler {
	if !t.Enabled() {
		return h
	}
	return otelhttp.NewHandler(h, operation,
		otelhttp.WithTracerProvider(t.Provider), otelhttp.WithPropagators(Propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if rt := route(r); rt != "" {
				return r.Method + " " + rt
			}
			return r.Method + " (no route)"
		}))
}

// Flush exports the spans not yet exported, within 5 s, and stops the
// tracer provider; a failure is logged as a warning.
func (t *Tracing) Flush(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.Shutdown(ctx); err != nil {
		logger.Warn("tracing shutdown", "err", err)
	}
}
