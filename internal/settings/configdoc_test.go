package settings

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md from the settings table")

// configurationDoc is the path of the settings reference, from the root
// of the repository.
const configurationDoc = "docs/configuration.md"

// TestConfigurationDoc keeps docs/configuration.md equal to the settings
// table. Regenerate it with "go generate ./internal/settings" (or this test
// with -update).
func TestConfigurationDoc(t *testing.T) {
	want := renderConfigurationDoc()
	if *update {
		if err := os.WriteFile(filepath.Join("..", "..", filepath.FromSlash(configurationDoc)), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got := testkit.ReadRepoFile(t, configurationDoc); got != want {
		t.Errorf("%s is stale: run go generate ./internal/settings", configurationDoc)
	}
}

// renderConfigurationDoc returns docs/configuration.md: the settings table
// as Markdown.
func renderConfigurationDoc() string {
	var b strings.Builder
	b.WriteString(`# Configuration

<!-- Generated from the settings table (internal/settings/table.go) by
TestConfigurationDoc: do not edit; run "go generate ./internal/settings". -->

Every setting of lookupd is an environment variable and a flag: the flag
wins over the variable, and an empty variable counts as unset. A command
reads only the settings that name it below; "lookupd <command> --help"
lists them with that command's defaults. Commands also have flags of their
own, without a variable (such as "lookupd project --until-caught-up"): see
their --help. Tracing is configured by the standard OTEL_* variables
(internal/tracing).

| variable | flag | default | commands | meaning |
|---|---|---|---|---|
`)
	for _, s := range table {
		fmt.Fprintf(&b, "| `%s` | `--%s` | %s | %s | %s |\n", envName(s.name), s.name, docDefaults(s), docCommands(s.in), s.usage)
	}
	return b.String()
}

// docDefaults is the default column of s: the table's default, then those
// of commands that differ.
func docDefaults(s setting) string {
	code := func(v string) string {
		if v == "" {
			return "none"
		}
		return "`" + v + "`"
	}
	out := code(s.def)
	byDef := map[string][]string{}
	var order []string
	for _, c := range cmdNames {
		if v := s.per[c.in]; v.def != "" {
			if byDef[v.def] == nil {
				order = append(order, v.def)
			}
			byDef[v.def] = append(byDef[v.def], c.name)
		}
	}
	for _, d := range order {
		out += fmt.Sprintf("; %s: %s", strings.Join(byDef[d], ", "), code(d))
	}
	return out
}

// docCommands names the commands of in.
func docCommands(in Commands) string {
	var names []string
	for _, c := range cmdNames {
		if in&c.in != 0 {
			names = append(names, c.name)
		}
	}
	return strings.Join(names, ", ")
}
