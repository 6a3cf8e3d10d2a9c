package tracing

import (
	"io"
	"testing"
)

func TestExporterName(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    string
		wantErr bool
	}{
		{"nothing set: off", nil, "", false},
		{"endpoint: otlp", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "otlp", false},
		{"traces endpoint: otlp", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, "otlp", false},
		{"console", map[string]string{"OTEL_TRACES_EXPORTER": "console"}, "console", false},
		{"none wins over an endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c"}, "", false},
		{"SDK disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "console"}, "", false},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := exporterName(func(k string) string { return tt.env[k] })
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("got %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestOffCostsNothing(t *testing.T) {
	tr, err := New(t.Context(), func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Enabled() || tr.Tracer("x") != nil {
		t.Error("tracing on with no OTEL_* variables")
	}
	if err := tr.Shutdown(t.Context()); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	var nilTr *Tracing
	if nilTr.Enabled() || nilTr.Tracer("x") != nil {
		t.Error("a nil Tracing is on")
	}
}
