package loadtest

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestBodyStoreRoundTrip(t *testing.T) {
	bodies := [][]byte{[]byte(`{"id":"a"}`), {}, []byte(`{"items":[{"ssn":"900-12-3456"}]}`), bytes.Repeat([]byte("x"), 70000)}
	tests := []struct {
		name    string
		close   bool                           // Close the writer (writes the index)
		tamper  func(t *testing.T, dir string) // after writing
		wantErr bool
	}{
		{name: "closed: every record back", close: true},
		{name: "not closed: no index, does not open", wantErr: true},
		{name: "a sealed byte changed: refused", close: true, wantErr: true, tamper: func(t *testing.T, dir string) {
			t.Helper()
			p := filepath.Join(dir, bodyData)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[20] ^= 1
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := NewBodyWriter(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bodies {
				if err := w.Append(b); err != nil {
					t.Fatal(err)
				}
			}
			if got := w.Len(); got != len(bodies) {
				t.Errorf("Len = %d, want %d", got, len(bodies))
			}
			if tt.close {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			} else {
				_ = w.w.Flush()
			}
			if tt.tamper != nil {
				tt.tamper(t, dir)
			}
			got, err := ReadBodies(dir)
			if tt.wantErr {
				if err == nil {
					t.Fatal("ReadBodies succeeded, want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Len() != len(bodies) {
				t.Fatalf("read %d records, want %d", got.Len(), len(bodies))
			}
			for i, b := range bodies {
				if !bytes.Equal(got.Body(i), b) {
					t.Errorf("record %d: got %d bytes, want %d", i, len(got.Body(i)), len(b))
				}
			}
		})
	}
}

// TestBodyStoreSealed: no body is in a file in plaintext, and the key is
// readable by its owner only.
func TestBodyStoreSealed(t *testing.T) {
	dir := t.TempDir()
	w, err := NewBodyWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("900-12-3456")
	if err := w.Append(secret); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{bodyData, bodyIndex, bodyKey} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, secret) {
			t.Errorf("%s holds a body in plaintext", name)
		}
	}
	info, err := os.Stat(filepath.Join(dir, bodyKey))
	if err != nil {
		t.Fatal(err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("key file mode %v, want 0600", mode)
	}
}
