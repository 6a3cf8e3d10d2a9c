package loadtest

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// metricsText is /metrics as lookupd writes it, trimmed: a gauge, a
// histogram without labels, a labelled line before an unlabelled one of
// the same name, and a value that is not a number.
const metricsText = `# HELP go_memstats_heap_inuse_bytes Number of heap bytes that are in use.
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 8.4295680e+07
go_memstats_heap_inuse_bytes_total 1
lookup_projector_applied_sequence{stream="PERSONS"} 7
lookup_projector_applied_sequence 2.000001e+06 1700000000000
lookup_projector_applied_sequence 3
# TYPE lookup_audit_records_per_message histogram
lookup_audit_records_per_message_bucket{le="1"} 4
lookup_audit_records_per_message_bucket{le="+Inf"} 9
lookup_audit_records_per_message_sum 123
lookup_audit_records_per_message_count 9
lookup_audit_commit_seconds_bucket{le="0.0005"} 6
lookup_audit_commit_seconds_sum 0.0045
lookup_audit_commit_seconds_count 8
bad_value x
`

func TestParseMetrics(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  map[string]float64
	}{
		{name: "both", names: []string{"go_memstats_heap_inuse_bytes", "lookup_projector_applied_sequence"},
			want: map[string]float64{"go_memstats_heap_inuse_bytes": 84295680, "lookup_projector_applied_sequence": 2000001}},
		{name: "a histogram's count and sum", names: []string{"lookup_audit_records_per_message_count", "lookup_audit_records_per_message_sum"},
			want: map[string]float64{"lookup_audit_records_per_message_count": 9, "lookup_audit_records_per_message_sum": 123}},
		{name: "labelled only", names: []string{"lookup_audit_records_per_message_bucket"}, want: map[string]float64{}},
		{name: "absent", names: []string{"go_memstats_sys_bytes"}, want: map[string]float64{}},
		{name: "not a number", names: []string{"bad_value"}, want: map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMetrics(strings.NewReader(metricsText), tt.names...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ParseMetrics = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestReadMetrics(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(metricsText))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	tests := []struct {
		name    string
		admin   string
		want    map[string]float64
		wantErr bool
	}{
		{name: "read", admin: srv.URL, want: map[string]float64{"lookup_audit_records_per_message_count": 9}},
		{name: "no /metrics", admin: srv.URL + "/nothing", wantErr: true},
		{name: "no server", admin: "http://127.0.0.1:1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadMetrics(srv.Client(), tt.admin, "lookup_audit_records_per_message_count")
			if (err != nil) != tt.wantErr {
				t.Fatalf("ReadMetrics error = %v, want an error: %v", err, tt.wantErr)
			}
			if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReadMetrics = %v, want %v", got, tt.want)
			}
		})
	}
}
