package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/projector"
)

// TestWarnLooseKeyFiles: a secret that the group or others may read or
// write, and a JWKS that they may write, are named in a warning; files
// kept to their owner, unset files and missing ones are not.
func TestWarnLooseKeyFiles(t *testing.T) {
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
		f    keyFile
		warn bool
	}{
		{"secret 0600", secretFile("S", file("s600", 0o600)), false},
		{"secret 0400", secretFile("S", file("s400", 0o400)), false},
		{"secret 0640", secretFile("S", file("s640", 0o640)), true},
		{"secret 0604", secretFile("S", file("s604", 0o604)), true},
		{"secret 0620", secretFile("S", file("s620", 0o620)), true},
		{"secret 0644", secretFile("S", file("s644", 0o644)), true},
		{"JWKS 0644", trustFile("J", file("j644", 0o644)), false},
		{"JWKS 0664", trustFile("J", file("j664", 0o664)), true},
		{"JWKS 0646", trustFile("J", file("j646", 0o646)), true},
		{"unset", secretFile("S", ""), false},
		{"missing", secretFile("S", filepath.Join(dir, "none")), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf logtest.Buffer
			warnLooseKeyFiles(slog.New(slog.NewTextHandler(&buf, nil)), tc.f)
			got := buf.String()
			if warned := strings.Contains(got, "level=WARN"); warned != tc.warn {
				t.Fatalf("warned %v, want %v: %q", warned, tc.warn, got)
			}
			if tc.warn && (!strings.Contains(got, "path="+tc.f.path) || !strings.Contains(got, "setting="+tc.f.setting)) {
				t.Errorf("warning %q does not name the setting %s and the file %s", got, tc.f.setting, tc.f.path)
			}
		})
	}
}

// TestStartUpWarnsOfLooseKeyFiles: serve and project warn, as they load
// them, of an encryption key file and a JWKS file others may use.
func TestStartUpWarnsOfLooseKeyFiles(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	jwks := filepath.Join(dir, "jwks.json")
	for _, p := range []string{key, jwks} {
		if err := os.WriteFile(p, []byte("not a key"), 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	var buf logtest.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := loadKeys(context.Background(), config{JWKSFile: jwks}, logger); err == nil {
		t.Error("loadKeys accepted a file that holds no JWKS")
	}
	if s, err := openStore(config{DataDir: filepath.Join(dir, "data"), EncryptionKeyFile: key}, logger); err == nil {
		s.Close()
		t.Error("openStore accepted a file that holds no key")
	}
	for _, setting := range []string{"LOOKUP_JWKS_FILE", "LOOKUP_ENCRYPTION_KEY_FILE"} {
		if !strings.Contains(buf.String(), "setting="+setting) {
			t.Errorf("no warning names %s:\n%s", setting, buf.String())
		}
	}
}

// openStore opens the read model in cfg.DataDir itself, encrypted with the
// key in cfg.EncryptionKeyFile when set. Errors name the file or directory.
func openStore(cfg config, logger *slog.Logger) (*projector.Store, error) {
	open, _, err := storeOpener(cfg, logger)
	if err != nil {
		return nil, err
	}
	return open(cfg.DataDir)
}
