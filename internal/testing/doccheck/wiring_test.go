package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// callsIn returns the calls pkg.name(...) in the non-test Go files of dir.
func callsIn(t *testing.T, dir, pkg, name string) int {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(nd ast.Node) bool {
			if sel, ok := nd.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkg && sel.Sel.Name == name {
					n++
				}
			}
			return true
		})
	}
	return n
}

// TestOneWiring: lookupd serve and the test server lookuptest build the
// API through the one constructor, internal/apiserver's New, and nothing
// else of the service builds a query.Server, so the test double cannot
// drift from the server.
func TestOneWiring(t *testing.T) {
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"cmd/lookupd", "lookuptest"} {
		if n := callsIn(t, filepath.Join(root, dir), "apiserver", "New"); n != 1 {
			t.Errorf("%s calls apiserver.New %d times, want once", dir, n)
		}
	}
	for _, dir := range []string{"cmd/lookupd", "lookuptest", "internal/dev", "internal/replica", "internal/admin"} {
		if n := callsIn(t, filepath.Join(root, dir), "query", "NewServer"); n != 0 {
			t.Errorf("%s builds a query.Server itself (%d calls); use apiserver.New", dir, n)
		}
	}
	if n := callsIn(t, filepath.Join(root, "internal/apiserver"), "query", "NewServer"); n != 1 {
		t.Errorf("internal/apiserver calls query.NewServer %d times, want once", n)
	}
}

// TestTestServerDependencies: a caller's test binary that imports
// lookuptest compiles what an in-process NATS, the projector and the API
// need, not lookupd's command line (its flags library, the progress bar
// of lookupd project, the container memory-limit probe), nor what the
// root go.mod lists for the service's own tests (testcontainers-go,
// chromedp).
func TestTestServerDependencies(t *testing.T) {
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-deps", "./lookuptest")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./lookuptest: %v", err)
	}
	deps := strings.Fields(string(out))
	for _, banned := range []string{"github.com/peterbourgon/ff/v4", "github.com/schollz/progressbar/v3",
		"github.com/KimMachineGun/automemlimit/memlimit", "github.com/lookup/persons/internal/settings",
		"github.com/testcontainers/testcontainers-go", "github.com/chromedp/chromedp"} {
		if slices.Contains(deps, banned) {
			t.Errorf("lookuptest compiles %s", banned)
		}
	}
	if !slices.Contains(deps, "github.com/lookup/persons/internal/apiserver") {
		t.Error("lookuptest does not compile internal/apiserver: the deps listed are not lookuptest's")
	}
}

// TestLoadToolImports: the load tool (cmd/loadtest, a module of its own)
// reaches the service through its public packages and its test support
// only (internal/testing/...), never another internal room.
func TestLoadToolImports(t *testing.T) {
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	err = filepath.WalkDir(filepath.Join(root, "cmd", "loadtest"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if strings.HasPrefix(p, "github.com/lookup/persons/internal/") && !strings.HasPrefix(p, "github.com/lookup/persons/internal/testing/") {
				t.Errorf("%s imports %s", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Fatalf("read %d files of the load tool", files)
	}
}
