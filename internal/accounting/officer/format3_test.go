package officer

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// mixedSide is one ledger of TestFormat3AccountsAsFormat2: its stream,
// its index, the FHIR search and the officer's pages over it, and each
// record the stream holds by its reference.
type mixedSide struct {
	js     jetstream.JetStream
	x      *accounting.Index
	search http.Handler
	pages  http.Handler
	stored map[string]ledger.Record
}

func newMixedSide(t *testing.T, js jetstream.JetStream) *mixedSide {
	t.Helper()
	s := &mixedSide{js: js, x: accountingtest.OpenIndex(t), stored: map[string]ledger.Record{}}
	accountingtest.Follow(t, s.x, js)
	now := func() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) }
	record := func(context.Context, accounting.Access) error { return nil }
	s.search = fhir.NewHandler(fhir.HandlerConfig{Index: s.x, Authorize: accountingtest.Authorize, Record: record, Now: now})
	var err error
	s.pages, err = New(Config{Index: s.x, Registry: accountingtest.ShippedRegistry(t), PageSize: 50, Now: now,
		Status:    func() accounting.IndexStatus { return accounting.IndexStatus{CaughtUp: true} },
		Authorize: accountingtest.Authorize, Record: record})
	if err != nil {
		t.Fatal(err)
	}
	err = ledger.Scan(t.Context(), js, ledger.DefaultStream, 0, func(_ uint64, recs []ledger.Record) error {
		for _, r := range recs {
			ref := accounting.Reference(&r)
			if _, ok := s.stored[ref]; ok {
				t.Errorf("reference %s given to two disclosures", ref)
			}
			s.stored[ref] = r
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ledger.Verify(t.Context(), js, ledger.DefaultStream)
	if err != nil || !rep.OK() {
		t.Fatalf("audit verify: %+v, %v", rep, err)
	}
	return s
}

// TestFormat3AccountsAsFormat2 (issue 45's "done when"): the same answers
// written half in format 2 and half in format 3 (the replica upgraded
// midway, its chain going on) give the same accounting as written wholly
// in format 2: per person and per recipient in the index, the FHIR
// search's AuditEvents (one patient entity each), the officer's CSV rows;
// every reference resolves to its disclosure in the stream, and those of
// the format 2 half are the same in both.
func TestFormat3AccountsAsFormat2(t *testing.T) {
	answers := accountingtest.MixedAnswers(40)
	half := len(answers) / 2
	_, jsA := testkit.StartNATS(t)
	accountingtest.WriteFormat2(t, jsA, "lookupd-0", answers, 3)
	ncB, jsB := testkit.StartNATS(t)
	accountingtest.WriteFormat2(t, jsB, "lookupd-0", answers[:half], 3)
	accountingtest.WriteFormat3(t, ncB, "lookupd-0", answers[half:], 4)
	holdsFormat3(t, jsB)
	a, b := newMixedSide(t, jsA), newMixedSide(t, jsB)
	if len(a.stored) != len(b.stored) {
		t.Fatalf("%d disclosures in format 2, %d half and half", len(a.stored), len(b.stored))
	}
	old := map[string]bool{}
	for _, an := range answers[:half] {
		old[an.RequestID] = true
	}

	for _, p := range accountingtest.MixedPersons {
		q := accounting.Query{Person: p, Limit: 7}
		sameRecords(t, "person "+p, old, a, b, accountingtest.SearchAll(t, a.x, q), accountingtest.SearchAll(t, b.x, q))
		sameFHIR(t, p, a, b)
		sameCSV(t, "/officer/person.csv?exempt=1&self=1&id="+p, a, b)
	}
	var recipients []accounting.RecipientQuery
	for _, c := range accountingtest.Clients {
		recipients = append(recipients, accounting.RecipientQuery{Client: c})
		if c != "robot" { // not in the registry: the page refuses it
			sameCSV(t, "/officer/recipient.csv?exempt=1&self=1&client="+c, a, b)
		}
	}
	for i := range 4 {
		recipients = append(recipients, accounting.RecipientQuery{Subject: fmt.Sprint("clerk-", i)})
	}
	for _, q := range recipients {
		sameRecords(t, fmt.Sprintf("recipient %+v", q), old, a, b, byRecipient(t, a.x, q), byRecipient(t, b.x, q))
	}
}

// holdsFormat3 fails t unless the stream holds a format 3 message of
// several answers and an answer split over two messages.
func holdsFormat3(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	var several, split bool
	seen := map[string]int{}
	err := ledger.Scan(t.Context(), js, ledger.DefaultStream, 0, func(seq uint64, recs []ledger.Record) error {
		requests := map[string]bool{}
		for _, r := range recs {
			requests[r.RequestID] = true
		}
		several = several || len(requests) > 1 && recs[0].RequestID >= "req-020"
		for id := range requests {
			seen[id]++
			split = split || seen[id] > 1
		}
		return nil
	})
	if err != nil || !several || !split {
		t.Fatalf("format 3 half: a message of several answers %v, an answer split %v (%v)", several, split, err)
	}
}

// sameRecords fails t unless got (of side b) says what want (of side a)
// says, record by record, but where each is stored; each record of b
// must be the disclosure its reference names in b's stream, and one of an
// answer of the format 2 half (old) must have a's reference.
func sameRecords(t *testing.T, what string, old map[string]bool, a, b *mixedSide, want, got []ledger.Record) {
	t.Helper()
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%s: %d records half and half, %d in format 2", what, len(got), len(want))
	}
	for i := range got {
		w, g := want[i], got[i]
		wref, gref := accounting.Reference(&w), accounting.Reference(&g)
		if s, ok := b.stored[gref]; !ok || !reflect.DeepEqual(s, g) {
			t.Errorf("%s: reference %s names %+v in the stream, the index %+v", what, gref, s, g)
		}
		if s := a.stored[wref]; !reflect.DeepEqual(s, w) {
			t.Errorf("%s: reference %s names %+v in the format 2 stream, the index %+v", what, wref, s, w)
		}
		if old[g.RequestID] && gref != wref {
			t.Errorf("%s: the format 2 record %s has the reference %s, %s in the ledger wholly of format 2", what, g.RequestID, gref, wref)
		}
		w.Chain, w.Seq, w.Index, g.Chain, g.Seq, g.Index = "", 0, 0, "", 0, 0
		if !reflect.DeepEqual(w, g) {
			t.Errorf("%s, record %d:\nhalf and half %+v\nformat 2      %+v", what, i, g, w)
		}
	}
}

// byRecipient returns every record of q, page after page.
func byRecipient(t *testing.T, x *accounting.Index, q accounting.RecipientQuery) []ledger.Record {
	t.Helper()
	q.Limit = 7
	var all []ledger.Record
	for range 100 {
		recs, next, err := x.SearchRecipient(q, nil)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, recs...)
		if next == "" {
			return all
		}
		q.After = next
	}
	t.Fatalf("%+v: no last page", q)
	return nil
}

// sameFHIR fails t unless the FHIR search of person answers the same
// AuditEvents on both sides, but their ids (the references), each with
// one patient entity, whose id names a disclosure of the person.
func sameFHIR(t *testing.T, person string, a, b *mixedSide) {
	t.Helper()
	var events [2][]string
	for i, s := range []*mixedSide{a, b} {
		rec := accountingtest.Get(s.search, "/fhir/AuditEvent?_count=500&entity="+person, "auditor")
		var bundle fhir.Bundle
		if err := json.Unmarshal(rec.Body.Bytes(), &bundle); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("FHIR search of %s: %d %v", person, rec.Code, err)
		}
		for _, e := range bundle.Entry {
			ev := e.Resource
			if r, ok := s.stored[ev.ID]; !ok || r.PersonID != person || len(ev.Entity) != 2 || ev.Entity[0].What.Reference != "Patient/"+person {
				t.Errorf("FHIR search of %s: AuditEvent %s names %+v, entities %+v", person, ev.ID, r, ev.Entity)
			}
			ev.ID = ""
			data, _ := json.Marshal(ev)
			events[i] = append(events[i], string(data))
		}
	}
	if len(events[0]) == 0 || !slices.Equal(events[0], events[1]) {
		t.Errorf("FHIR search of %s:\nhalf and half %q\nformat 2      %q", person, events[1], events[0])
	}
}

// sameCSV fails t unless the officer's export target answers the same
// rows on both sides, but their references, each of which names a
// disclosure of its side.
func sameCSV(t *testing.T, target string, a, b *mixedSide) {
	t.Helper()
	var rows [2][]string
	for i, s := range []*mixedSide{a, b} {
		rec := accountingtest.Get(s.pages, target, "officer")
		all, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil || rec.Code != http.StatusOK || len(all) < 2 {
			t.Fatalf("GET %s: %d, %d rows, %v", target, rec.Code, len(all), err)
		}
		ref := slices.Index(all[0], "reference")
		for _, row := range all[1:] {
			if _, ok := s.stored[row[ref]]; !ok {
				t.Errorf("GET %s: the reference %s names no disclosure", target, row[ref])
			}
			row[ref] = ""
			rows[i] = append(rows[i], strings.Join(row, "|"))
		}
	}
	if !slices.Equal(rows[0], rows[1]) {
		t.Errorf("GET %s:\nhalf and half %q\nformat 2      %q", target, rows[1], rows[0])
	}
}
