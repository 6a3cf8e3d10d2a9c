package fhir_test

import (
	"context"
	"encoding/json"
	"github.com/lookup/persons/internal/accounting/fhir"
	"slices"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// The persons of these tests.
var personA, personB = accountingtest.Persons[0], accountingtest.Persons[1]

func TestFHIRBundleIsBALPPatientRead(t *testing.T) {
	rec := ledger.Record{Time: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), RequestID: "req-1", Subject: "user-1",
		Client: "app-1", Operation: "getAuthorizedSigners", PersonID: personA, SSNMode: "FULL",
		DOBDisclosed: true, Purpose: "TREAT", Persons: 1, Replica: "r1", Chain: "c", Seq: 7}
	raw, err := json.Marshal(fhir.FHIRBundle([]ledger.Record{rec}, rec.Time))
	if err != nil {
		t.Fatal(err)
	}
	var b struct {
		ResourceType string
		Type         string
		Entry        []struct {
			Resource struct {
				ResourceType string
				ID           string
				Meta         struct{ Profile []string }
				Action       string
				Recorded     string
				Type         struct{ Code string }
				Subtype      []struct{ Code string }
				Agent        []struct {
					Who       struct{ Identifier struct{ Value string } }
					Requestor *bool
				}
				Source         struct{ Observer struct{ Display string } }
				PurposeOfEvent []struct{ Text string }
				Entity         []struct {
					What struct{ Reference string }
					Role struct{ Code string }
				}
			}
		}
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatal(err)
	}
	if b.ResourceType != "Bundle" || b.Type != "searchset" || len(b.Entry) != 1 {
		t.Fatalf("bundle = %s", raw)
	}
	ev := b.Entry[0].Resource
	checks := []struct {
		what      string
		got, want any
	}{
		{"resourceType", ev.ResourceType, "AuditEvent"},
		{"id", ev.ID, "c-7"},
		{"profile", ev.Meta.Profile[0], fhir.BALPPatientRead},
		{"action", ev.Action, "R"},
		{"recorded", ev.Recorded, "2026-01-01T12:00:00Z"},
		{"type", ev.Type.Code, "rest"},
		{"subtype", ev.Subtype[0].Code, "read"},
		{"client", ev.Agent[1].Who.Identifier.Value, "app-1"},
		{"user", ev.Agent[2].Who.Identifier.Value, "user-1"},
		{"user is requestor", *ev.Agent[2].Requestor, true},
		{"observer", ev.Source.Observer.Display, "lookupd r1"},
		{"purpose", ev.PurposeOfEvent[0].Text, "TREAT"},
		{"patient", ev.Entity[0].What.Reference, "Patient/" + personA},
		{"patient role", ev.Entity[0].Role.Code, "1"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
}

// TestFHIRAccountingGiven: the record of an accounting given to the
// person carries the date of their request, before the operation (which
// stays the patient entity's last detail).
func TestFHIRAccountingGiven(t *testing.T) {
	rec := ledger.Record{Time: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), RequestID: "req-1", Operation: "provideAccounting",
		PersonID: personA, Requested: "2026-11-02", Persons: 1, Replica: "accounting", Chain: "accounting", Seq: 1, Index: 1}
	d := fhir.FHIRBundle([]ledger.Record{rec}, rec.Time).Entry[0].Resource.Entity[0].Detail
	want := []fhir.EntityDetail{{Type: "accounting_requested", ValueString: "2026-11-02"}, {Type: "operation", ValueString: "provideAccounting"}}
	if !slices.Equal(d, want) {
		t.Errorf("the patient entity's details = %+v, want %+v", d, want)
	}
}

// TestFHIRIDsAreDistinctWithinAMessage: the records of one message get
// AuditEvent ids of their own.
func TestFHIRIDsAreDistinctWithinAMessage(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	l, err := ledger.New(nc, ledger.Config{Replica: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	d := events.Disclosure{RequestID: "req-1", Operation: "getAuthorizedSigners",
		Persons: []events.DisclosedPerson{{ID: personA, SSNMode: "LAST4"}, {ID: personB, SSNMode: "LAST4"}}}
	if err := l.Disclose(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	var recs []ledger.Record
	for _, p := range []string{personA, personB} {
		r, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, p, time.Time{}, time.Time{})
		if err != nil || len(r) != 1 {
			t.Fatalf("ScanPerson(%s) = %v, %v", p, r, err)
		}
		recs = append(recs, r...)
	}
	b := fhir.FHIRBundle(recs, time.Now())
	if a, c := b.Entry[0].Resource.ID, b.Entry[1].Resource.ID; a == c || a != "r1-1-1" || c != "r1-1-2" {
		t.Errorf("AuditEvent ids %q and %q, want r1-1-1 and r1-1-2", a, c)
	}
}
