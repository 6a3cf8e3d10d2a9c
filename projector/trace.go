package projector

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// maxLinks bounds the links of one batch span.
const maxLinks = 128

// traceBatch records the span of a committed batch (Config.Tracer), from
// the stream timestamp of its oldest event to now, linked to the publisher
// spans of the events that carry a trace context. Nothing without a Tracer.
func (p *Projector) traceBatch(ctx context.Context, items []item) {
	if p.cfg.Tracer == nil || len(items) == 0 {
		return
	}
	var links []trace.Link
	start := time.Now()
	for i := range items {
		it := &items[i]
		if !it.time.IsZero() && it.time.Before(start) {
			start = it.time
		}
		if it.ev.TraceParent == "" || len(links) == maxLinks {
			continue
		}
		c := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": it.ev.TraceParent})
		if sc := trace.SpanContextFromContext(c); sc.IsValid() {
			links = append(links, trace.Link{SpanContext: sc})
		}
	}
	_, span := p.cfg.Tracer.Start(ctx, "project batch", trace.WithTimestamp(start), trace.WithLinks(links...),
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
			attribute.String("messaging.system", "nats"),
			attribute.String("messaging.destination.name", p.cfg.Stream),
			attribute.Int("messaging.batch.message_count", len(items)),
			attribute.Int64("lookup.position", int64(items[len(items)-1].seq)), //nolint:gosec // stream sequences fit
		))
	span.End()
}
