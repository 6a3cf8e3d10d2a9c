package keyfile

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadAES(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, 24)
	tests := []struct {
		name    string
		content []byte
		want    []byte
	}{
		{"raw 16", bytes.Repeat([]byte{1}, 16), bytes.Repeat([]byte{1}, 16)},
		{"raw 24", raw, raw},
		{"raw 32 including newline bytes", bytes.Repeat([]byte{'\n'}, 32), bytes.Repeat([]byte{'\n'}, 32)},
		{"hex with newline", []byte(hex.EncodeToString(raw) + "\n"), raw},
		{"base64", []byte(base64.StdEncoding.EncodeToString(raw)), raw},
		{"too short", []byte("secret"), nil},
		{"hex of wrong length", []byte(hex.EncodeToString(raw[:10])), nil},
		{"empty", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "key")
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := ReadAES(path)
			if tt.want == nil {
				if !errors.Is(err, ErrNoKey) {
					t.Fatalf("err = %v, want ErrNoKey", err)
				}
				if len(tt.content) > 0 && strings.Contains(err.Error(), string(tt.content)) {
					t.Errorf("error %q reveals the file content", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, tt.want) {
				t.Fatalf("got %x, %v; want %x", got, err, tt.want)
			}
		})
	}
	if _, err := ReadAES(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("missing file: no error")
	}
}
