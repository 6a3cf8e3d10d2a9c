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
// of lookupd project, the container memory-limit probe).
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
		"github.com/KimMachineGun/automemlimit/memlimit", "github.com/lookup/persons/internal/settings"} {
		if slices.Contains(deps, banned) {
			t.Errorf("lookuptest compiles %s", banned)
		}
	}
	if !slices.Contains(deps, "github.com/lookup/persons/internal/apiserver") {
		t.Error("lookuptest does not compile internal/apiserver: the deps listed are not lookuptest's")
	}
}
