package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRemoveModel: a rebuild removes a model directory, or none, but never
// a directory holding anything else.
func TestRemoveModel(t *testing.T) {
	tests := []struct {
		name    string
		files   []string // made in the directory; nil: no directory
		wantErr string
	}{
		{name: "no directory"},
		{name: "empty", files: []string{}},
		{name: "a model", files: []string{"nats/x", "lookupd/MANIFEST", "bodies.dat", "bodies.idx", "bodies.key", "manifest.json"}},
		{name: "a half-built model", files: []string{"nats/x", "bodies.dat", "manifest.json.tmp"}},
		{name: "something else", files: []string{"nats/x", "go.mod"}, wantErr: "holds go.mod"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "model")
			if tt.files != nil {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tt.files {
				p := filepath.Join(dir, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := removeModel(dir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if _, serr := os.Stat(filepath.Join(dir, tt.files[0])); serr != nil {
					t.Errorf("a refused directory lost its files: %v", serr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("directory still there: %v", err)
			}
		})
	}
}
