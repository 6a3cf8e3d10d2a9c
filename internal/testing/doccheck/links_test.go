package doccheck

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// repoFiles returns the text files of the repository (relative, slash
// separated), without the directories of git, builds and local data.
func repoFiles(t *testing.T) []string {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			switch {
			case strings.HasPrefix(d.Name(), "."), rel == "bin", rel == "data", strings.HasSuffix(rel, "testdata"):
				return filepath.SkipDir
			}
			return nil
		}
		switch path.Ext(rel) {
		case ".md", ".go", ".yaml", ".json", ".conf", ".Dockerfile":
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func exists(rel string) bool {
	root, err := testkit.RepoRoot()
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(root, filepath.FromSlash(rel)))
	return err == nil
}

// headings returns the text of the headings of a Markdown text, outside
// code fences, without their leading #s.
func headings(md string) []string {
	var out []string
	inFence := false
	for _, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			inFence = !inFence
		}
		if inFence || !strings.HasPrefix(line, "#") {
			continue
		}
		out = append(out, strings.TrimSpace(strings.TrimLeft(line, "#")))
	}
	return out
}

// anchors returns the GitHub anchors of the headings of a Markdown text.
func anchors(md string) map[string]bool {
	out := map[string]bool{}
	for _, h := range headings(md) {
		var b strings.Builder
		for _, r := range strings.ToLower(h) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out[b.String()] = true
	}
	return out
}

var (
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// TestLinksResolve checks every relative Markdown link (and its anchor).
func TestLinksResolve(t *testing.T) {
	for _, f := range repoFiles(t) {
		if path.Ext(f) != ".md" {
			continue
		}
		for _, m := range mdLink.FindAllStringSubmatch(testkit.ReadRepoFile(t, f), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			rel := f
			if file != "" {
				rel = path.Join(path.Dir(f), file)
			}
			if !exists(rel) {
				t.Errorf("%s links to %s, which does not exist", f, target)
				continue
			}
			if anchor != "" && path.Ext(rel) == ".md" && !anchors(testkit.ReadRepoFile(t, rel))[anchor] {
				t.Errorf("%s links to %s: %s has no heading #%s", f, target, rel, anchor)
			}
		}
	}
}
