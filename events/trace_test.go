package events

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestPublisherCarriesTraceParent: an event published within a span
// carries that span's W3C traceparent (the CloudEvents distributed tracing
// extension), and Decode gives it back; without a span there is none.
func TestPublisherCarriesTraceParent(t *testing.T) {
	js, st := runJetStream(t)
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(t.Context(), "publish")
	defer span.End()
	p := NewPublisher(js)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"within a span", ctx, span.SpanContext().TraceID().String()},
		{"without a span", t.Context(), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := NewEvent("urn:test", 1, Consumer{ConsumerID: testConsumerID, BusinessID: testBusinessID, FirstName: "A", LastName: "B"})
			if err != nil {
				t.Fatal(err)
			}
			seq, err := p.Publish(tc.ctx, ev)
			if err != nil {
				t.Fatal(err)
			}
			msg, err := st.GetMsg(t.Context(), seq)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Decode(msg.Subject, msg.Data)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" && got.TraceParent != "" || tc.want != "" && !strings.HasPrefix(got.TraceParent, "00-"+tc.want+"-") {
				t.Errorf("traceparent %q, want trace id %q", got.TraceParent, tc.want)
			}
		})
	}
}
