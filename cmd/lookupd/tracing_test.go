package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
)

// TestServeTraces: with OTEL_TRACES_EXPORTER=console, serve records a span
// per request, child of the caller's W3C traceparent, and a span per
// applied batch linked to the publisher's trace (the event's traceparent
// extension); without OTEL_* variables it records none.
func TestServeTraces(t *testing.T) {
	ns, js := personsNATS(t)
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	pctx, pubSpan := tp.Tracer("publisher").Start(t.Context(), "onboard")
	id := dev.DemoID("t-consumer", 0)
	ev, err := events.NewEvent("urn:test", 1, events.Consumer{ConsumerID: id, BusinessID: dev.DemoID("business", 0), FirstName: "A", LastName: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := events.NewPublisher(js).Publish(pctx, ev); err != nil {
		t.Fatal(err)
	}
	pubSpan.End()
	pubTrace := pubSpan.SpanContext().TraceID().String()
	const callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"

	for _, on := range []bool{true, false} {
		environ := serveEnv(t, ns, t.TempDir())
		if on {
			environ["OTEL_TRACES_EXPORTER"] = "console"
		}
		p := start(t, environ, "serve")
		addrs := p.addrs(t)
		waitReady(t, addrs["admin"])
		req, err := http.NewRequest(http.MethodGet, "http://"+addrs["api"]+"/api/v1/persons/"+id, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience}))
		req.Header.Set("traceparent", "00-"+callerTrace+"-00f067aa0ba902b7-01")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET person: %d", resp.StatusCode)
		}
		p.cancel() // the exporter flushes at shutdown
		if err := p.wait(t, 30*time.Second); err != nil {
			t.Fatalf("serve: %v", err)
		}
		out := p.stderr.String()
		gotReq := strings.Contains(out, `"TraceID":"`+callerTrace+`"`) && strings.Contains(out, `"Name":"GET /api/v1/persons/{person_id}"`)
		gotBatch := strings.Contains(out, `"Name":"project batch"`) && strings.Contains(out, `"TraceID":"`+pubTrace+`"`)
		if on && (!gotReq || !gotBatch) {
			t.Errorf("tracing on: request span in the caller's trace %v, batch span linked to the publisher's %v; stderr:\n%s", gotReq, gotBatch, out)
		}
		if !on && (strings.Contains(out, `"SpanContext"`) || strings.Contains(out, callerTrace)) {
			t.Errorf("tracing off, yet spans were written:\n%s", out)
		}
		if strings.Contains(out, id) && on {
			// The person id may be in the logs' route? It must not name a span.
			if strings.Contains(out, `"Name":"GET /api/v1/persons/`+id) {
				t.Error("a span is named after a person id")
			}
		}
	}
}
