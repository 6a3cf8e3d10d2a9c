package keyfile

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestWarnLoose: a secret that the group or others may read or
// write, and a JWKS that they may write, are named in a warning; files
// kept to their owner, unset files and missing ones are not.
func TestWarnLoose(t *testing.T) {
	dir := t.TempDir()
	file := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		f    KeyFile
		warn bool
	}{
		{"secret 0600", Secret("S", file("s600", 0o600)), false},
		{"secret 0400", Secret("S", file("s400", 0o400)), false},
		{"secret 0640", Secret("S", file("s640", 0o640)), true},
		{"secret 0604", Secret("S", file("s604", 0o604)), true},
		{"secret 0620", Secret("S", file("s620", 0o620)), true},
		{"secret 0644", Secret("S", file("s644", 0o644)), true},
		{"JWKS 0644", Trust("J", file("j644", 0o644)), false},
		{"JWKS 0664", Trust("J", file("j664", 0o664)), true},
		{"JWKS 0646", Trust("J", file("j646", 0o646)), true},
		{"unset", Secret("S", ""), false},
		{"missing", Secret("S", filepath.Join(dir, "none")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf testkit.LogBuffer
			WarnLoose(slog.New(slog.NewTextHandler(&buf, nil)), tc.f)
			got := buf.String()
			if warned := strings.Contains(got, "level=WARN"); warned != tc.warn {
				t.Fatalf("warned %v, want %v: %q", warned, tc.warn, got)
			}
			if tc.warn && (!strings.Contains(got, "path="+tc.f.Path) || !strings.Contains(got, "setting="+tc.f.Setting)) {
				t.Errorf("warning %q does not name the setting %s and the file %s", got, tc.f.Setting, tc.f.Path)
			}
		})
	}
}
