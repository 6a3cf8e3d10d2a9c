package loadtest

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	const text = `# HELP go_memstats_heap_inuse_bytes Number of heap bytes that are in use.
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 8.4295680e+07
go_memstats_heap_inuse_bytes_total 1
lookup_projector_applied_sequence{stream="PERSONS"} 7
lookup_projector_applied_sequence 2.000001e+06 1700000000000
lookup_projector_applied_sequence 3
bad_value x
`
	tests := []struct {
		name  string
		names []string
		want  map[string]float64
	}{
		{name: "both", names: []string{"go_memstats_heap_inuse_bytes", "lookup_projector_applied_sequence"},
			want: map[string]float64{"go_memstats_heap_inuse_bytes": 84295680, "lookup_projector_applied_sequence": 2000001}},
		{name: "absent", names: []string{"go_memstats_sys_bytes"}, want: map[string]float64{}},
		{name: "not a number", names: []string{"bad_value"}, want: map[string]float64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMetrics(strings.NewReader(text), tt.names...)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseMetrics = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTablesOnDisk(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"000001.sst": 10, "m1/000002.sst": 5, "m1/000001.vlog": 7, "MANIFEST": 3} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		dir  string
		want int64
	}{
		{name: "tables at any depth, nothing else", dir: dir, want: 15},
		{name: "no directory given", dir: "", want: -1},
		{name: "missing directory", dir: filepath.Join(dir, "absent"), want: -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tablesOnDisk(tt.dir); got != tt.want {
				t.Errorf("tablesOnDisk = %d, want %d", got, tt.want)
			}
		})
	}
}
