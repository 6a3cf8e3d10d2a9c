package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
)

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
	var buf testkit.LogBuffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	if _, err := loadKeys(t.Context(), settings.Config{JWKSFile: jwks}, logger); err == nil {
		t.Error("loadKeys accepted a file that holds no JWKS")
	}
	if _, err := encryptionKey(settings.Config{EncryptionKeyFile: key}, logger); err == nil {
		t.Error("encryptionKey accepted a file that holds no key")
	}
	for _, setting := range []string{"LOOKUP_JWKS_FILE", "LOOKUP_ENCRYPTION_KEY_FILE"} {
		if !strings.Contains(buf.String(), "setting="+setting) {
			t.Errorf("no warning names %s:\n%s", setting, buf.String())
		}
	}
}
