// Package keyfile reads and checks the files that hold keys: it warns of
// key files that others than their owner may use (warn.go: a secret, such
// as a private or symmetric key, a password or a token, that the group or
// others may read or write; a trust anchor, a JWKS, that they may write),
// and reads the AES key that encrypts a read model at rest (aes.go). An
// error or a log line names a file, never its content.
package keyfile

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
)

// KeyFile is a file whose mode matters: a secret (a private or symmetric
// key) that only its owner may read or write, or a trust anchor (a JWKS:
// its keys decide which tokens are accepted) that only its owner may
// write.
type KeyFile struct {
	Setting string // what names the file, for the operator: a variable or a role
	Path    string // "" when not configured
	Secret  bool
}

// Secret is the secret file at path, named by setting.
func Secret(setting, path string) KeyFile {
	return KeyFile{Setting: setting, Path: path, Secret: true}
}

// Trust is the trust anchor file at path, named by setting.
func Trust(setting, path string) KeyFile { return KeyFile{Setting: setting, Path: path} }

// WarnLoose logs a warning for each configured file that its
// group or others may read or write (a secret) or write (a trust anchor).
// It does not stop the start-up: a file it cannot stat is left to the
// code that reads it, and Windows file modes say nothing of this.
func WarnLoose(logger *slog.Logger, files ...KeyFile) {
	if runtime.GOOS == "windows" {
		return
	}
	for _, f := range files {
		if f.Path == "" {
			continue
		}
		fi, err := os.Stat(f.Path) // follows symbolic links, as Kubernetes Secret volumes use
		if err != nil {
			continue
		}
		perm := fi.Mode().Perm()
		switch {
		case f.Secret && perm&0o077 != 0:
			logger.Warn("key file is readable or writable by its group or others; restrict it to its owner (chmod 600)",
				"setting", f.Setting, "path", f.Path, "mode", fmt.Sprintf("%#o", perm))
		case !f.Secret && perm&0o022 != 0:
			logger.Warn("key file is writable by its group or others, who could add a key that signs tokens; restrict writes to its owner (chmod 644)",
				"setting", f.Setting, "path", f.Path, "mode", fmt.Sprintf("%#o", perm))
		}
	}
}
