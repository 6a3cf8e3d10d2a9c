package soak

import (
	"os"
	"path/filepath"
	"testing"
)

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
