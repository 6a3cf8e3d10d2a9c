package main

import (
	"fmt"
	"log/slog"
	"os"
	"runtime"
)

// keyFile is a file whose mode matters: a secret (a private or symmetric
// key) that only its owner may read or write, or a trust anchor (a JWKS:
// its keys decide which tokens are accepted) that only its owner may
// write.
type keyFile struct {
	setting string // what names the file, for the operator: a variable or a role
	path    string // "" when not configured
	secret  bool
}

func secretFile(setting, path string) keyFile {
	return keyFile{setting: setting, path: path, secret: true}
}
func trustFile(setting, path string) keyFile { return keyFile{setting: setting, path: path} }

// warnLooseKeyFiles logs a warning for each configured file that its
// group or others may read or write (a secret) or write (a trust anchor).
// It does not stop the start-up: a file it cannot stat is left to the
// code that reads it, and Windows file modes say nothing of this.
func warnLooseKeyFiles(logger *slog.Logger, files ...keyFile) {
	if runtime.GOOS == "windows" {
		return
	}
	for _, f := range files {
		if f.path == "" {
			continue
		}
		fi, err := os.Stat(f.path) // follows symbolic links, as Kubernetes Secret volumes use
		if err != nil {
			continue
		}
		perm := fi.Mode().Perm()
		switch {
		case f.secret && perm&0o077 != 0:
			logger.Warn("key file is readable or writable by its group or others; restrict it to its owner (chmod 600)",
				"setting", f.setting, "path", f.path, "mode", fmt.Sprintf("%#o", perm))
		case !f.secret && perm&0o022 != 0:
			logger.Warn("key file is writable by its group or others, who could add a key that signs tokens; restrict writes to its owner (chmod 644)",
				"setting", f.setting, "path", f.path, "mode", fmt.Sprintf("%#o", perm))
		}
	}
}
