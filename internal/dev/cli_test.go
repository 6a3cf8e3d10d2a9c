package dev

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadForAndMintN(t *testing.T) {
	path := filepath.Join(t.TempDir(), KeyFile)
	if _, err := LoadKeyFor(path, false); err == nil || !strings.Contains(err.Error(), "--create") {
		t.Fatalf("LoadFor(missing, false) = %v, want an error that names --create", err)
	}
	k, err := LoadKeyFor(path, true)
	if err != nil {
		t.Fatalf("LoadFor(missing, true): %v", err)
	}
	for _, n := range []int{1, 3} {
		var buf bytes.Buffer
		if err := MintN(&buf, k, TokenRequest{Subject: "s", TTL: time.Minute, Now: time.Now()}, n); err != nil {
			t.Fatalf("MintN(%d): %v", n, err)
		}
		lines := strings.Fields(buf.String())
		seen := map[string]bool{}
		for _, l := range lines {
			seen[l] = true
		}
		if len(lines) != n || len(seen) != n {
			t.Errorf("MintN(%d) wrote %d tokens, %d distinct; want %d distinct", n, len(lines), len(seen), n)
		}
	}
}
