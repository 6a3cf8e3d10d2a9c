package events

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceParentOf returns the W3C traceparent of the span in ctx, "" when
// ctx holds no valid span context (then at no cost). The projector links
// the span of the batch that applies the event to it, so that a trace runs
// from the publisher to the moment the event became visible.
func traceParentOf(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}
