package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/repofile"
)

// TestREADME keeps the README true to the code: its configuration table
// names every setting with its flag and default, its example ids are the
// dev mode's, and its test command is the Makefile's.
func TestREADME(t *testing.T) {
	readme := repofile.Read(t, "README.md")
	for _, s := range allSettings() {
		def := "none"
		if s.def != "" {
			def = "`" + s.def + "`"
		}
		row := regexp.MustCompile(`(?m)^\| ` + "`" + s.env + "`" + ` \| ` + "`--" + s.flag + "`" + ` \| ` + regexp.QuoteMeta(def) + ` \|`)
		if !row.MatchString(readme) {
			t.Errorf("README lacks the row | `%s` | `--%s` | %s |", s.env, s.flag, def)
		}
	}
	d, err := newDemoData()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).FindAllString(readme, -1) {
		if id != d.Consumer {
			t.Errorf("README example id %s is not the dev mode's example consumer %s", id, d.Consumer)
		}
	}
	mk := repofile.Read(t, "Makefile")
	const testCmd = "go test -race -count=1 ./..."
	if !strings.Contains(readme, testCmd) || !strings.Contains(mk, "$(GO) test -race -count=1 ./...") {
		t.Errorf("README and Makefile disagree on the test command %q", testCmd)
	}
	for _, c := range commands {
		if !strings.Contains(readme, "`lookupd "+c.name) {
			t.Errorf("README does not describe lookupd %s", c.name)
		}
	}
	for _, m := range []string{metricApplied, metricAppliedSeq, metricLag, metricAge} {
		if !strings.Contains(readme, m) && !strings.Contains(readme, strings.TrimPrefix(m, "lookup_projector")) {
			t.Errorf("README does not document metric %s", m)
		}
	}
}
