package query

import (
	"strconv"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestAPIDocListsProblemTypes keeps docs/api.md, which explains the
// problem types to client developers, in step with problemKinds: a row
// per kind, with its status, and the base URI.
func TestAPIDocListsProblemTypes(t *testing.T) {
	doc := testkit.ReadRepoFile(t, "docs/api.md")
	if !strings.Contains(doc, "`"+problemBase+"`") {
		t.Errorf("docs/api.md does not name the base URI %s", problemBase)
	}
	for k, pk := range problemKinds {
		row := "| `" + pk.Slug + "` | " + strconv.Itoa(pk.Status) + " |"
		if !strings.Contains(doc, row) {
			t.Errorf("docs/api.md lacks the row %q (problem kind %d)", row, k)
		}
	}
}
