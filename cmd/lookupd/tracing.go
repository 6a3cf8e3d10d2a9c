package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/lookup/persons/tracing"
)

// traced returns api recording a span per request when tracing is on (an
// incoming W3C traceparent is the span's parent), else api itself: no cost
// when off.
func traced(api http.Handler, tr *tracing.Tracing) http.Handler {
	if !tr.Enabled() {
		return api
	}
	return otelhttp.NewHandler(api, "lookupd api",
		otelhttp.WithTracerProvider(tr.Provider), otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return r.Method + " " + routeOf(r) }))
}

// routeOf names the operation of r without its ids (a span name must not
// carry a person id).
func routeOf(r *http.Request) string {
	switch p := r.URL.Path; {
	case len(p) > len("/api/v1/persons/") && p[:len("/api/v1/persons/")] == "/api/v1/persons/":
		return "/api/v1/persons/{person_id}"
	default:
		return p
	}
}

// shutdownTracing flushes the spans not yet exported, within 5 s.
func shutdownTracing(tr *tracing.Tracing, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		logger.Warn("tracing shutdown", "err", err)
	}
}
