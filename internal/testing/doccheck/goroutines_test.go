package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestEveryGoroutineDefersGuard holds ARCHITECTURE.md's rule that every
// goroutine the service starts defers crash.Guard first, so that a panic
// in any of them still writes out the log buffer (internal/crash). It
// walks the go statements of every non-test file of the service (the
// nested modules, test support and the black-box suite aside): a go
// statement must start a function literal, or call a function or method
// of its package, whose leading defer statements include
// "defer crash.Guard()" (deferred after the others, it runs first).
func TestEveryGoroutineDefersGuard(t *testing.T) {
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string][]*ast.File{} // by directory
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || skippedDir(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkgs[filepath.Dir(rel)] = append(pkgs[filepath.Dir(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var checked int
	for dir, files := range pkgs {
		funcs := map[string]*ast.FuncDecl{} // by name; methods by their name alone
		for _, f := range files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					funcs[fd.Name.Name] = fd
				}
			}
		}
		for _, f := range files {
			ast.Inspect(f, func(n ast.Node) bool {
				g, ok := n.(*ast.GoStmt)
				if !ok {
					return true
				}
				checked++
				if !startsGuarded(g.Call, funcs) {
					t.Errorf("%s: a goroutine that does not defer crash.Guard first (%s)", fset.Position(g.Pos()), dir)
				}
				return true
			})
		}
	}
	if checked < 10 {
		t.Fatalf("found %d go statements; the walk missed the service's code", checked)
	}
}

// skippedDir reports whether the walk leaves the folder rel out: nested
// modules, test support, the black-box suite and the deployment files.
func skippedDir(rel string) bool {
	for _, p := range []string{"cmd/loadtest", "lookupdcontainer", "examples", "deploy", "integration", "internal/testing", "docs", "bin"} {
		if rel == p {
			return true
		}
	}
	return false
}

// startsGuarded reports whether the goroutine of call begins with defer
// crash.Guard(): its function literal, or the function or method of the
// package it names.
func startsGuarded(call *ast.CallExpr, funcs map[string]*ast.FuncDecl) bool {
	var body *ast.BlockStmt
	switch fn := call.Fun.(type) {
	case *ast.FuncLit:
		body = fn.Body
	case *ast.Ident:
		if fd := funcs[fn.Name]; fd != nil {
			body = fd.Body
		}
	case *ast.SelectorExpr:
		if fd := funcs[fn.Sel.Name]; fd != nil {
			body = fd.Body
		}
	}
	if body == nil {
		return false
	}
	for _, s := range body.List {
		d, ok := s.(*ast.DeferStmt)
		if !ok {
			return false // past the leading defers
		}
		if sel, ok := d.Call.Fun.(*ast.SelectorExpr); ok {
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "crash" && sel.Sel.Name == "Guard" {
				return true
			}
		}
	}
	return false
}
