package doccheck

import (
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// What a document may name, and how the checker knows it exists:
//
//   - file: a path ending in a known extension (query/openapi.yaml,
//     ./cmd/lookupd/run.go, internal/auth/jwks*.go), from the repository root or
//     the document's folder, or a bare Go file name (store.go), somewhere
//     in the tree;
//   - folder: a path whose first element is at the top of the repository
//     (internal/ledger/, deploy/streams);
//   - package: an import path of this module, a package of a go command
//     (go test ./query), or a Go name qualified by a package name in
//     backticks (`events.NewPublisher`): the name is one of our packages
//     or one our code imports, and a name qualified by one of our
//     packages is declared there (methods included);
//   - flag (--foo), environment variable (LOOKUP_FOO) and metric
//     (lookup_foo): a string literal of the non-test Go code (a flag name,
//     a struct tag's value, a metric name) or, for a flag, a struct
//     field's name (UntilCaughtUp: --until-caught-up), or, for a flag and
//     its variable, the other one of the pair (--nats-url,
//     LOOKUP_NATS_URL). Loose on purpose: the configuration code may
//     declare its settings in any of these ways;
//   - Go declaration: the names in backticks after a Go file, as the
//     decision records cite code (`projector/session.go` (`session`)),
//     are declared in that file;
//   - section: a heading in quotes after a document's name, as comments
//     cite them (docs/operations.md, "Logs"), is a heading of it.
//
// Markdown documents are checked for every kind; Go files for the files,
// folders, packages and sections their comments name; configuration files
// for the paths they name.
type refKind string

const (
	refFile    refKind = "file"
	refFolder  refKind = "folder"
	refPackage refKind = "package"
	refFlag    refKind = "flag"
	refEnv     refKind = "environment variable"
	refMetric  refKind = "metric"
	refDecl    refKind = "Go declaration"
	refSection refKind = "section"
)

type ref struct {
	kind refKind
	name string
}

// facts is what exists: the sources of truth the references are held to.
type facts struct {
	// exists reports whether a slash-separated path from the repository
	// root names a file or a folder.
	exists   func(rel string) bool
	top      map[string]bool            // entries at the top of the repository
	goFiles  map[string]bool            // base names of the Go files
	pkgDirs  map[string]bool            // folders holding a Go package
	inFile   map[string]map[string]bool // Go file -> the names it declares
	pkgNames map[string]bool            // names of our packages and of those our code imports
	decls    map[string]map[string]bool // our package name -> its top-level identifiers
	literals map[string]bool            // string literals of non-test Go code, and struct tags' values
	// headings returns the headings (lower case, without backticks) of a
	// Markdown document, nil when there is no such document.
	headings func(rel string) map[string]bool
}

// otherTools' flags appear in the documents' commands (nats, kubectl,
// curl, docker); they are not ours to check.
var otherTools = map[string]bool{
	"config": true, "from-file": true, "from-env-file": true, "user": true, "password": true,
	"tlscert": true, "tlskey": true, "tlsca": true, "cacert": true, "header": true,
	"signal": true, "replicas": true, "inbox-prefix": true, "help": true, "load-restrictor": true,
	"always": true, "dirty": true, // git describe
}

var (
	pathRun   = regexp.MustCompile(`[A-Za-z0-9_.~/*-]+`)
	fileExt   = regexp.MustCompile(`\.(?:go|md|yaml|yml|json|conf|Dockerfile|sh)$`)
	bareGo    = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./*-])([a-z0-9][a-z0-9_]*\.go)\b`)
	qualified = regexp.MustCompile("`([a-z][a-z0-9]+)\\.([A-Z][A-Za-z0-9_]*)") // not `t.Helper`: a variable
	// fileDecls is a Go file followed by names it declares, as the
	// decision records cite code: `projector/session.go` (`session`).
	fileDecls  = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go)` \\(([^)]*)\\)")
	backticked = regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*)`")
	goCommand  = regexp.MustCompile(`\bgo (?:test|run|build|vet|list|install|generate)\b[^\n|]*`)
	goPackage  = regexp.MustCompile(`(?:^|\s)(\./[A-Za-z0-9_./-]*)`)
	flagRef    = regexp.MustCompile(`(?:^|[^A-Za-z0-9-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)`)
	envRef     = regexp.MustCompile(`\bLOOKUP_[A-Z0-9_]*[A-Z0-9]\b`)
	metricRef  = regexp.MustCompile(`\blookup_[a-z0-9_]*[a-z0-9]\b`)
	// section is a document followed by one of its headings in quotes, as
	// comments cite them: (docs/operations.md, "Logs"), README "Commands".
	section   = regexp.MustCompile(`(?:^|[^A-Za-z0-9_./-])((?:[A-Za-z0-9_-]+/)*[A-Za-z0-9_-]+\.md|README|ARCHITECTURE),? "([^"]+)"`)
	lineBreak = regexp.MustCompile(`\s*\n\s*(?://\s*)?`)
)

const module = "github.com/lookup/persons/"

// check returns the references of a document's text that name nothing
// that exists. kinds limits the check to some kinds (nil: all).
func (fx *facts) check(doc, text string, kinds ...refKind) []ref {
	c := &collector{kinds: kinds, seen: map[ref]bool{}}
	fx.checkPaths(c, path.Dir(doc), text)
	fx.checkGoNames(c, text)
	fx.checkNames(c, text)
	fx.checkSections(c, path.Dir(doc), text)
	return c.out
}

// collector gathers the stale references of one document, once each, of
// the kinds asked for.
type collector struct {
	kinds []refKind
	seen  map[ref]bool
	out   []ref
}

func (c *collector) want(k refKind) bool {
	if len(c.kinds) == 0 {
		return true
	}
	for _, w := range c.kinds {
		if w == k {
			return true
		}
	}
	return false
}

func (c *collector) report(k refKind, name string) {
	r := ref{k, name}
	if c.want(k) && !c.seen[r] {
		c.seen[r] = true
		c.out = append(c.out, r)
	}
}

// checkPaths checks the paths (files, folders, import paths) and the bare
// Go file names of a text.
func (fx *facts) checkPaths(c *collector, dir, text string) {
	for _, loc := range pathRun.FindAllStringIndex(text, -1) {
		p := text[loc[0]:loc[1]]
		if loc[0] > 0 && text[loc[0]-1] == ':' && p[0] >= '0' && p[0] <= '9' {
			continue // a URL's port and path: localhost:9000/oidc/.well-known/jwks.json
		}
		if k, name, ok := fx.checkPath(dir, p); !ok {
			c.report(k, name)
		}
	}
	for _, m := range bareGo.FindAllStringSubmatch(text, -1) {
		if m[1] != "nats.go" && !fx.goFiles[m[1]] {
			c.report(refFile, m[1])
		}
	}
}

// checkGoNames checks qualified Go names, the declarations cited after a
// Go file, and the packages of go commands.
func (fx *facts) checkGoNames(c *collector, text string) {
	for _, m := range qualified.FindAllStringSubmatch(text, -1) {
		pkg, id := m[1], m[2]
		switch {
		case fx.goFiles[pkg+"."+id] || fileExt.MatchString("."+id):
			// a file: lookupd.Dockerfile
		case !fx.pkgNames[pkg]:
			c.report(refPackage, pkg)
		case fx.decls[pkg] != nil && !fx.decls[pkg][id]:
			c.report(refPackage, pkg+"."+id)
		}
	}
	for _, m := range fileDecls.FindAllStringSubmatch(text, -1) {
		decls := fx.inFile[path.Clean(m[1])]
		if decls == nil {
			continue // no such file: reported as a file
		}
		for _, id := range backticked.FindAllStringSubmatch(m[2], -1) {
			if !decls[id[1]] {
				c.report(refDecl, m[1]+": "+id[1])
			}
		}
	}
	for _, cmd := range goCommand.FindAllString(text, -1) {
		for _, m := range goPackage.FindAllStringSubmatch(cmd, -1) {
			p := path.Clean(strings.TrimSuffix(m[1], "/..."))
			if p != "." && !fx.pkgDirs[p] {
				c.report(refPackage, m[1])
			}
		}
	}
}

// checkNames checks the flags, environment variables and metrics of a
// text.
func (fx *facts) checkNames(c *collector, text string) {
	for _, m := range flagRef.FindAllStringSubmatch(text, -1) {
		if f := m[1]; !otherTools[f] && !fx.literals[f] && !fx.literals[envOf(f)] {
			c.report(refFlag, "--"+f)
		}
	}
	for _, v := range envRef.FindAllString(text, -1) {
		if !fx.literals[v] && !fx.literals[flagOf(v)] {
			c.report(refEnv, v)
		}
	}
	for _, m := range metricRef.FindAllString(text, -1) {
		base := m
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(m, suffix); ok && fx.literals[b] {
				base = b
			}
		}
		if !fx.literals[base] {
			c.report(refMetric, m)
		}
	}
}

// checkSections checks that each heading a text cites, after the name of
// a document, is a heading of that document.
func (fx *facts) checkSections(c *collector, dir, text string) {
	for _, m := range section.FindAllStringSubmatch(lineBreak.ReplaceAllString(text, " "), -1) {
		doc, heading := m[1], m[2]
		if doc == "README" || doc == "ARCHITECTURE" {
			doc += ".md"
		}
		headings := fx.headings(doc)
		if headings == nil {
			headings = fx.headings(path.Join(dir, doc))
		}
		if headings != nil && !headings[strings.ToLower(heading)] {
			c.report(refSection, doc+`, "`+heading+`"`)
		}
	}
}

// checkPath classifies a run of path characters and reports whether what
// it names exists; runs that are not paths into the repository are ok.
// A path counts when it ends in a file extension of ours or starts at the
// top of the repository; it may hold a * (internal/auth/jwks*.go).
func (fx *facts) checkPath(dir, p string) (refKind, string, bool) {
	p = strings.TrimLeft(p, "-")
	if !strings.Contains(p, "/") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") {
		return "", "", true
	}
	if rest, ok := strings.CutPrefix(p, module); ok {
		rest = strings.TrimSuffix(strings.TrimSuffix(rest, "/..."), "/")
		return refPackage, strings.TrimSuffix(p, "/..."), fx.pkgDirs[rest]
	}
	p = strings.TrimRight(strings.TrimSuffix(p, "/..."), ".")
	first, rest, _ := strings.Cut(strings.TrimLeft(p, "./"), "/")
	kind := refFolder
	switch {
	case fileExt.MatchString(p):
		kind = refFile
	case !fx.top[first] || strings.HasPrefix(p, "."):
		return "", "", true // not a path into the repository: "and/or", "net/http", "./data"
	case rest == "s":
		return "", "", true // a rate: "2,000 events/s"
	}
	candidates := []string{path.Clean(p), path.Join(dir, p)}
	for _, c := range candidates {
		if fx.exists(c) || isGenerated(c) || isGenerated(path.Join(composeDir, p)) {
			return "", "", true
		}
	}
	return kind, strings.TrimSuffix(p, "/"), false
}

// composeDir is the folder the compose file's paths are relative to
// (`${LOOKUP_JWKS_HOST_FILE:-./dev/jwks.json}`).
const composeDir = "deploy/compose"

// generated are the folders that commands of deploy/README.md and the
// Makefile (bin/, its build output) write and git ignores.
var generated = []string{"bin/", "deploy/compose/dev/", "deploy/compose/secrets/", "deploy/k8s/secrets/"}

func isGenerated(p string) bool {
	for _, g := range generated {
		if strings.HasPrefix(p+"/", g) {
			return true
		}
	}
	return false
}

// envOf and flagOf give the other name of a setting: --nats-url is
// LOOKUP_NATS_URL.
func envOf(flag string) string {
	return "LOOKUP_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

func flagOf(env string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(env, "LOOKUP_"), "_", "-"))
}

// TestDocumentsNameWhatExists checks every document (README.md,
// ARCHITECTURE.md, docs/, the decision records, deploy/README.md), the
// comments of the Go code and the configuration files: each file, folder,
// package, flag, environment variable and metric they name exists.
func TestDocumentsNameWhatExists(t *testing.T) {
	fx := repoFacts(t)
	for _, f := range repoFiles(t) {
		text := testkit.ReadRepoFile(t, f)
		if strings.Contains(text, "PRODUCT"+".md") {
			t.Errorf("%s cites PRODUCT%s, which is not in the repository (cite docs/)", f, ".md")
		}
		var stale []ref
		switch path.Ext(f) {
		case ".md":
			stale = fx.check(f, text)
		case ".go":
			stale = fx.check(f, goComments(t, f, text), refFile, refFolder, refPackage, refSection)
		default:
			stale = fx.check(f, text, refFile)
		}
		sort.Slice(stale, func(i, j int) bool { return stale[i].name < stale[j].name })
		for _, r := range stale {
			t.Errorf("%s names the %s %s, which does not exist", f, r.kind, r.name)
		}
	}
}

// TestCheckerFindsStaleReferences plants a stale reference of each kind,
// beside a true one of the same kind, in a document and in a Go comment:
// the checker must report the stale one and only it.
func TestCheckerFindsStaleReferences(t *testing.T) {
	fx := repoFacts(t)
	tests := []struct {
		name, doc, text string
		want            []ref
	}{
		{"file by path", "README.md", "the API is in `query/openapi.yaml`, auth in `query/auth.go`.",
			[]ref{{refFile, "query/auth.go"}}},
		{"file relative to the document", "docs/README.md", "see [x](api.md) and ../query/openapi.yaml and ../query/nope.yaml",
			[]ref{{refFile, "../query/nope.yaml"}}},
		{"bare Go file", "ARCHITECTURE.md", "`store.go` holds the store, `auth.go` the tokens.",
			[]ref{{refFile, "auth.go"}}},
		{"folder", "ARCHITECTURE.md", "### `internal/ledger/`\n### `internal/widgets/`, `deploy/streams`",
			[]ref{{refFolder, "internal/widgets"}}},
		{"package by import path", "README.md", "import github.com/lookup/persons/events and github.com/lookup/persons/natsconn",
			[]ref{{refPackage, "github.com/lookup/persons/natsconn"}}},
		{"package by qualified name", "README.md", "use `events.NewPublisher(js)`, `widgets.Connect(url)` and `events.NoSuchThing`",
			[]ref{{refPackage, "widgets"}, {refPackage, "events.NoSuchThing"}}},
		{"declaration of a cited file", "docs/decisions/0003-ordered-consumer.md", "- Code: `projector/session.go` (`session`, the pipeline), `projector/projector.go` (`Run`, `deadLetter`).",
			[]ref{{refDecl, "projector/projector.go: deadLetter"}}},
		{"package in a go command", "README.md", "`go test -race ./projector/... ./internal/ledger ./audit`, `go run ./cmd/loadtest --help`",
			[]ref{{refPackage, "./audit"}}},
		{"flag", "README.md", "`lookupd serve --nats-url nats://x --no-such-flag`, `loadtest --rounds 3`",
			[]ref{{refFlag, "--no-such-flag"}}},
		{"environment variable", "docs/operations.md", "set `LOOKUP_NATS_URL` and `LOOKUP_NO_SUCH_SETTING`.",
			[]ref{{refEnv, "LOOKUP_NO_SUCH_SETTING"}}},
		{"metric", "docs/operations.md", "`lookup_ready`, `lookup_http_request_duration_seconds_bucket` and `lookup_no_such_total{outcome}`",
			[]ref{{refMetric, "lookup_no_such_total"}}},
		{"section", "deploy/README.md", "restores the newest (docs/operations.md, \"Snapshots, bootstrap\nand rebuilds\"); figures in README, \"Memory soak\"",
			[]ref{{refSection, `README.md, "Memory soak"`}}},
		{"not paths", "README.md", "read/write, and/or, `application/problem+json`, log/slog, https://example.com/query/x.go, http://localhost:9000/oidc/.well-known/jwks.json, /api/v1/persons, ~/.cache/lookupd/dev-key.pem",
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fx.check(tc.doc, tc.text)
			if !sameRefs(got, tc.want) {
				t.Errorf("check(%q) = %v, want %v", tc.text, got, tc.want)
			}
		})
	}
	t.Run("Go comment", func(t *testing.T) {
		src := "// Package x reads query/openapi.yaml; see query/auth.go and internal/widgets\n// (README, \"Operations\"; docs/operations.md, \"Logs\").\npackage x\n\nvar s = \"query/auth.go\"\n"
		got := fx.check("query/x.go", goComments(t, "x.go", src), refFile, refFolder, refPackage, refSection)
		want := []ref{{refFile, "query/auth.go"}, {refFolder, "internal/widgets"}, {refSection, `README.md, "Operations"`}}
		if !sameRefs(got, want) {
			t.Errorf("check of a Go comment = %v, want %v", got, want)
		}
	})
}

func sameRefs(got, want []ref) bool {
	if len(got) != len(want) {
		return false
	}
	g := map[ref]bool{}
	for _, r := range got {
		g[r] = true
	}
	for _, r := range want {
		if !g[r] {
			return false
		}
	}
	return true
}

func TestKebab(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"UntilCaughtUp", "until-caught-up"},
		{"NatsURL", "nats-url"},
		{"HTTPAddr", "http-addr"},
		{"print", "print"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := kebab(tc.in); got != tc.want {
				t.Errorf("kebab(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
