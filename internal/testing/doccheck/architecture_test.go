package doccheck

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// layeringRow is a row of ARCHITECTURE.md's "Layering" table: a room and
// the rooms of this module it imports.
var layeringRow = regexp.MustCompile("(?m)^\\| `([a-z/]+)` \\| ([^|]*) \\|$")

// TestArchitectureImports holds the code to ARCHITECTURE.md's layering
// table, both ways: each room named there imports, in its non-test code,
// exactly the rooms of this module the table lists ("none" for none);
// and a room said to use "the standard library alone" imports nothing
// else.
func TestArchitectureImports(t *testing.T) {
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	doc := testkit.ReadRepoFile(t, "ARCHITECTURE.md")
	_, layering, ok := strings.Cut(doc, "\n## Layering\n")
	if !ok {
		t.Fatal(`ARCHITECTURE.md has no "Layering" section`)
	}
	rows := layeringRow.FindAllStringSubmatch(layering, -1)
	if len(rows) < 10 {
		t.Fatalf("the layering table has %d rows; want every room that has rules", len(rows))
	}
	for _, row := range rows {
		room, cell := row[1], row[2]
		t.Run(room, func(t *testing.T) {
			var want []string
			for _, m := range regexp.MustCompile("`([a-z/]+)`").FindAllStringSubmatch(cell, -1) {
				want = append(want, m[1])
			}
			slices.Sort(want)
			ours, others := imports(t, filepath.Join(root, filepath.FromSlash(room)))
			if !slices.Equal(ours, want) {
				t.Errorf("%s imports %v of this module; ARCHITECTURE.md says %v", room, ours, want)
			}
			if strings.Contains(cell, "standard library alone") {
				for _, p := range others {
					if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
						t.Errorf("%s imports %s; ARCHITECTURE.md says the standard library alone", room, p)
					}
				}
			}
		})
	}
}

// imports returns the sorted import paths of the non-test Go files of the
// package in dir: those of this module (without the module's prefix) and
// the others.
func imports(t *testing.T, dir string) (ours, others []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil || seen[p] {
				continue
			}
			seen[p] = true
			if rest, ok := strings.CutPrefix(p, module); ok {
				ours = append(ours, rest)
			} else {
				others = append(others, p)
			}
		}
	}
	if len(seen) == 0 && len(entries) == 0 {
		t.Fatalf("%s holds no Go file", dir)
	}
	slices.Sort(ours)
	slices.Sort(others)
	return ours, others
}

// TestArchitectureIsAMap: ARCHITECTURE.md stays a map a newcomer reads in
// ten minutes, at most 200 lines; the detail lives in package comments.
func TestArchitectureIsAMap(t *testing.T) {
	if n := strings.Count(testkit.ReadRepoFile(t, "ARCHITECTURE.md"), "\n"); n > 200 {
		t.Fatalf("ARCHITECTURE.md is %d lines; keep it at most 200 (move detail into package comments)", n)
	}
}
