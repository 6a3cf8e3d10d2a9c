package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestFormatDocExampleIsAMessage: the example messages of
// docs/audit-ledger-format.md are a format 3 message and a format 2 one
// with no field the code does not know, read as the document says (the
// same first answer, the references it names), and its field tables name
// every field.
func TestFormatDocExampleIsAMessage(t *testing.T) {
	doc := testkit.ReadRepoFile(t, "docs/audit-ledger-format.md")
	examples := strings.Split(doc, "```json\n")[1:]
	if len(examples) != 2 {
		t.Fatalf("%d json examples in docs/audit-ledger-format.md, want 2 (format 3, format 2)", len(examples))
	}
	var read [2][]Record
	for i, into := range []any{&answerMessage{}, &Message{}} {
		example, _, ok := strings.Cut(examples[i], "```")
		if !ok {
			t.Fatalf("example %d not closed", i+1)
		}
		dec := json.NewDecoder(strings.NewReader(example))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			t.Fatalf("example %d: %v", i+1, err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(example)); err != nil {
			t.Fatal(err)
		}
		m, err := decodeMessage(compact.Bytes())
		if err != nil || m.Version != []int{FormatVersion, Format2}[i] {
			t.Fatalf("decodeMessage(example %d) = format %d, %v", i+1, m.Version, err)
		}
		read[i] = recordsOf(ReplicaSubject(m.Replica), m)
	}
	if len(read[0]) != 3 || !reflect.DeepEqual(read[0][:2], read[1]) {
		t.Errorf("the format 3 example's first answer reads\n%+v\nthe format 2 example\n%+v", read[0][:2], read[1])
	}
	for _, r := range read[0] {
		if ref := fmt.Sprintf("`%s-%d-%d`", r.Chain, r.Seq, r.Index); !strings.Contains(doc, ref) {
			t.Errorf("docs/audit-ledger-format.md does not name the reference %s of %s", ref, r.PersonID)
		}
	}
	full, _ := json.Marshal(Record{Subject: "s", Client: "c", Tenants: []string{"t"}, SSNMode: "FULL", DOBDisclosed: true, Purpose: "p"})
	var fields map[string]any
	_ = json.Unmarshal(full, &fields)
	for f := range fields {
		if !strings.Contains(doc, "| `"+f+"` |") {
			t.Errorf("docs/audit-ledger-format.md: no row for the record field %q", f)
		}
	}
	for _, f := range []string{"v", "replica", "seq", "prev", "records", "disclosed"} {
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
