package ledger

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestFormatDocExampleIsAMessage: the example message of
// docs/audit-ledger-format.md is a format 2 message with no field the
// code does not know, and its field tables name every field.
func TestFormatDocExampleIsAMessage(t *testing.T) {
	doc := testkit.ReadRepoFile(t, "docs/audit-ledger-format.md")
	start := strings.Index(doc, "```json\n")
	end := strings.Index(doc[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no json example in docs/audit-ledger-format.md")
	}
	example := doc[start+8 : start+8+end]
	dec := json.NewDecoder(strings.NewReader(example))
	dec.DisallowUnknownFields()
	var m Message
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("example: %v", err)
	}
	if m.Version != FormatVersion || len(m.Records) != 2 {
		t.Errorf("example = %+v, want format %d with two records", m, FormatVersion)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(example)); err != nil {
		t.Fatal(err)
	}
	if _, err := decodeMessage(compact.Bytes()); err != nil {
		t.Errorf("decodeMessage(example): %v", err)
	}
	full, _ := json.Marshal(Record{Subject: "s", Client: "c", Tenants: []string{"t"}, SSNMode: "FULL", DOBDisclosed: true, Purpose: "p"})
	var fields map[string]any
	_ = json.Unmarshal(full, &fields)
	for f := range fields {
		if !strings.Contains(doc, "| `"+f+"` |") {
			t.Errorf("docs/audit-ledger-format.md: no row for the record field %q", f)
		}
	}
	for _, f := range []string{"v", "replica", "seq", "prev", "records"} {
		if !strings.Contains(doc, "| `"+f+"` |") {
			t.Errorf("docs/audit-ledger-format.md: no row for the message field %q", f)
		}
	}
}

// TestEnsureStreamMigratesFormat1: an audit stream of format 1 gets the
// subjects of format 2 added.
func TestEnsureStreamMigratesFormat1(t *testing.T) {
	_, js := runNATS(t)
	ctx := t.Context()
	cfg := StreamConfig(DefaultStream)
	cfg.Subjects = []string{LegacySubjectPrefix + "*"}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStream(ctx, js, DefaultStream); err != nil {
		t.Fatalf("EnsureStream: %v", err)
	}
	s, err := js.Stream(ctx, DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Subjects; !slices.Contains(got, ReplicaSubjectPrefix+"*") || !slices.Contains(got, LegacySubjectPrefix+"*") {
		t.Errorf("subjects after EnsureStream = %v, want both formats'", got)
	}
}
