// Repository files: it reads the repository's own files (documents, the
// Makefile, deployment definitions) in tests that hold them true to the
// code, by their slash-separated path from the repository root.

package testkit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// ReadRepoFile returns the content of the file at rel, a slash-separated path
// from the repository root (e.g. "docs/api.md"), and fails the test if it
// cannot be read.
func ReadRepoFile(t testing.TB, rel string) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// RepoRoot returns the repository root: the nearest directory at or above the
// working directory (a test's package directory) that holds go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("repofile: no go.mod at or above the working directory")
		}
		dir = parent
	}
}
