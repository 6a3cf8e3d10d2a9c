package main

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/lookup/persons/internal/tracing"
	"github.com/lookup/persons/query"
)

// traced returns api recording a span per request when tracing is on (an
// incoming W3C traceparent is the span's parent), named by the method and
// the route pattern, never by an id; else api itself: no cost when off.
func traced(api *query.Server, tr *tracing.Tracing) http.Handler {
	if !tr.Enabled() {
		return api
	}
	return otelhttp.NewHandler(api, "lookupd api",
		otelhttp.WithTracerProvider(tr.Provider), otelhttp.WithPropagators(tracing.Propagator),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if route := api.Route(r); route != "" {
				return r.Method + " " + route
			}
			return r.Method + " (no route)"
		}))
}

// shutdownTracing flushes the spans not yet exported, within 5 s.
func shutdownTracing(tr *tracing.Tracing, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		logger.Warn("tracing shutdown", "err", err)
	}
}
