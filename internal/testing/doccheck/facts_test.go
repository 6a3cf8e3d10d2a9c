package doccheck

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/lookup/persons/internal/testing/testkit"
)

// repoFacts gathers the facts of the repository this test runs in.
func repoFacts(t *testing.T) *facts {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	fx := &facts{
		exists: func(rel string) bool {
			matches, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(rel)))
			return err == nil && len(matches) > 0
		},
		top:      map[string]bool{},
		goFiles:  map[string]bool{},
		pkgDirs:  map[string]bool{},
		inFile:   map[string]map[string]bool{},
		pkgNames: map[string]bool{},
		decls:    map[string]map[string]bool{},
		literals: map[string]bool{},
		headings: func(rel string) map[string]bool {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
			if err != nil {
				return nil
			}
			return headingsOf(string(b))
		},
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		fx.top[e.Name()] = true
	}
	fset := token.NewFileSet()
	for _, f := range repoFiles(t) {
		if path.Ext(f) != ".go" {
			continue
		}
		fx.goFiles[path.Base(f)] = true
		fx.pkgDirs[path.Dir(f)] = true
		src := testkit.ReadRepoFile(t, f)
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range file.Imports {
			fx.pkgNames[importName(imp)] = true
		}
		fx.inFile[f] = map[string]bool{}
		for _, d := range file.Decls {
			for _, id := range declNames(d) {
				fx.inFile[f][id] = true
			}
		}
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		name := file.Name.Name
		fx.pkgNames[name] = true
		if fx.decls[name] == nil {
			fx.decls[name] = map[string]bool{}
		}
		for _, d := range file.Decls {
			for _, id := range declNames(d) {
				fx.decls[name][id] = true
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					fx.addLiteral(n.Value)
				}
			case *ast.Field:
				// A configuration library may name a flag after its
				// struct field: UntilCaughtUp is --until-caught-up.
				for _, id := range n.Names {
					fx.literals[kebab(id.Name)] = true
				}
			}
			return true
		})
	}
	fx.addComposeVariables(t)
	return fx
}

// addComposeVariables records the compose files' own variables (ports,
// host paths), which are named LOOKUP_* too.
func (fx *facts) addComposeVariables(t *testing.T) {
	t.Helper()
	for _, f := range repoFiles(t) {
		if strings.HasPrefix(f, composeDir+"/") && path.Ext(f) == ".yaml" {
			for _, v := range envRef.FindAllString(testkit.ReadRepoFile(t, f), -1) {
				fx.literals[v] = true
			}
		}
	}
}

var (
	tagValue     = regexp.MustCompile(`[A-Za-z_]+:"([^"]*)"`)
	majorVersion = regexp.MustCompile(`^v[0-9]+$`)
)

// addLiteral records a Go string literal: its value, without the dashes
// of a flag written in full, and the values of a struct tag.
func (fx *facts) addLiteral(quoted string) {
	v, err := strconv.Unquote(quoted)
	if err != nil {
		return
	}
	fx.literals[strings.TrimLeft(v, "-")] = true
	for _, m := range tagValue.FindAllStringSubmatch(v, -1) {
		for _, part := range strings.Split(m[1], ",") {
			fx.literals[strings.TrimLeft(part, "-")] = true
		}
	}
}

// importName is the name a file uses for an import: its alias, or the
// last element of its path that is not a major version.
func importName(imp *ast.ImportSpec) string {
	if imp.Name != nil {
		return imp.Name.Name
	}
	p, _ := strconv.Unquote(imp.Path.Value)
	elems := strings.Split(p, "/")
	last := elems[len(elems)-1]
	if majorVersion.MatchString(last) && len(elems) > 1 {
		last = elems[len(elems)-2]
	}
	last, _, _ = strings.Cut(last, ".")
	return strings.TrimPrefix(last, "go-")
}

// declNames returns the top-level names a declaration declares, methods
// included (documents write `projector.Run` for (*Projector).Run).
func declNames(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		out = append(out, d.Name.Name)
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
	}
	return out
}

// goComments returns the comments of a Go file, one a line.
func goComments(t *testing.T, name, src string) string {
	t.Helper()
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile(name, -1, len(src)), []byte(src), nil, scanner.ScanComments)
	var b strings.Builder
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return b.String()
		}
		if tok == token.COMMENT {
			b.WriteString(lit)
			b.WriteByte('\n')
		}
	}
}

// headingsOf returns the headings of a Markdown text, lower case and
// without backticks: "## Memory: `make soak`" is "memory: make soak".
func headingsOf(md string) map[string]bool {
	out := map[string]bool{}
	for _, h := range headings(md) {
		out[strings.ToLower(strings.ReplaceAll(h, "`", ""))] = true
	}
	return out
}

// kebab writes a Go name as a flag: UntilCaughtUp is until-caught-up,
// NatsURL nats-url, HTTPAddr http-addr.
func kebab(name string) string {
	var b strings.Builder
	rs := []rune(name)
	for i, r := range rs {
		lower := unicode.ToLower(r)
		if i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('-')
		}
		b.WriteRune(lower)
	}
	return b.String()
}
