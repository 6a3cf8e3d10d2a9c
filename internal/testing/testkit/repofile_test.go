package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	if got := ReadRepoFile(t, "go.mod"); !strings.HasPrefix(got, "module github.com/lookup/persons\n") {
		t.Errorf("Read(go.mod) = %.40q..., want the module's go.mod", got)
	}
}

func TestRootFromSubdirectory(t *testing.T) {
	want, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(want, "docs", "decisions"))
	got, err := RepoRoot()
	if err != nil || got != want {
		t.Errorf("Root() from docs/decisions = %q, %v; want %q", got, err, want)
	}
}

func TestRootWithoutGoMod(t *testing.T) {
	t.Chdir(t.TempDir())
	if _, err := os.Stat("go.mod"); err == nil {
		t.Skip("the temporary directory holds a go.mod")
	}
	if got, err := RepoRoot(); err == nil {
		t.Errorf("Root() outside any module = %q, want an error", got)
	}
}
