package tracing

import (
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestHandler: off, the handler is returned as it is; on, each request is
// a span named by its method and route ("(no route)" without one).
func TestHandler(t *testing.T) {
	calls := 0
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ })
	var off *Tracing
	off.Handler(h, "op", nil).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	if calls != 1 {
		t.Fatalf("off: handler called %d times, want 1", calls)
	}

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	on := &Tracing{Provider: tp}
	route := func(r *http.Request) string {
		if r.URL.Path == "/persons/1" {
			return "/persons/{id}"
		}
		return ""
	}
	th := on.Handler(h, "op", route)
	for _, path := range []string{"/persons/1", "/nope"} {
		th.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "GET /persons/{id}" || spans[1].Name != "GET (no route)" {
		t.Errorf("spans = %v, want GET /persons/{id} and GET (no route)", spans.Snapshots())
	}
	if calls != 3 {
		t.Errorf("handler called %d times, want 3", calls)
	}
}
