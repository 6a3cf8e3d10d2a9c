// Package tracing sets up OpenTelemetry traces from the standard OTEL_*
// environment variables, and is off unless an exporter is configured:
//
//   - OTEL_TRACES_EXPORTER: "otlp" (OTLP over HTTP, configured by the
//     OTEL_EXPORTER_OTLP_* variables), "console" (JSON on standard error) or
//     "none"; unset means "otlp" when OTEL_EXPORTER_OTLP_ENDPOINT or
//     OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, else off;
//   - OTEL_SDK_DISABLED=true turns it off whatever else is set;
//   - OTEL_SERVICE_NAME (default "lookupd"), OTEL_RESOURCE_ATTRIBUTES and
//     the OTEL_TRACES_SAMPLER variables as the SDK reads them.
//
// Context travels as W3C trace context (traceparent).
package tracing

import (
	"context"
	"fmt"
	"io"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// Tracing is the tracer provider of the process, nil when tracing is off.
type Tracing struct {
	Provider trace.TracerProvider
	shutdown func(context.Context) error
}

// Propagator is the propagation of trace context: W3C traceparent.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Enabled reports whether t records spans.
func (t *Tracing) Enabled() bool { return t != nil && t.Provider != nil }

// Tracer returns the named tracer, nil when tracing is off.
func (t *Tracing) Tracer(name string) trace.Tracer {
	if !t.Enabled() {
		return nil
	}
	return t.Provider.Tracer(name)
}

// Shutdown flushes and stops the exporter; nothing when off.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if !t.Enabled() || t.shutdown == nil {
		return nil
	}
	return t.shutdown(ctx)
}

// exporterName returns the exporter the variables ask for, "" for none.
func exporterName(getenv func(string) string) (string, error) {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return "", nil
	}
	switch e := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); e {
	case "none":
		return "", nil
	case "otlp", "console":
		return e, nil
	case "":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
			return "otlp", nil
		}
		return "", nil
	default:
		return "", fmt.Errorf("OTEL_TRACES_EXPORTER %q: want otlp, console or none", e)
	}
}

// New returns the tracing the variables (read through getenv) ask for;
// console output goes to stderr. A Tracing that is off is valid and costs
// nothing.
func New(ctx context.Context, getenv func(string) string, stderr io.Writer) (*Tracing, error) {
	name, err := exporterName(getenv)
	if err != nil || name == "" {
		return &Tracing{}, err
	}
	var exp sdktrace.SpanExporter
	switch name {
	case "otlp":
		exp, err = otlptracehttp.New(ctx)
	case "console":
		exp, err = stdouttrace.New(stdouttrace.WithWriter(stderr))
	}
	if err != nil {
		return nil, fmt.Errorf("tracing: %s exporter: %w", name, err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName(serviceName(getenv))))
	if err != nil {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &Tracing{Provider: tp, shutdown: tp.Shutdown}, nil
}

func serviceName(getenv func(string) string) string {
	if s := getenv("OTEL_SERVICE_NAME"); s != "" {
		return s
	}
	return "lookupd"
}
