package accountingtest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/testkit"
)

// Disclosure is one disclosure of the officer's fixture, as the tests
// expect to see it.
type Disclosure struct {
	I                                    int
	Person, Client, Subject, Purpose, Op string
	At                                   time.Time // zero: I hours after 2026-11-01
	Request                              string    // the caller's X-Request-Id ("": req-NN)
}

// Time returns when d was disclosed.
func (d Disclosure) Time() time.Time {
	if !d.At.IsZero() {
		return d.At
	}
	return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(d.I) * time.Hour)
}

// RequestID returns d's request id, as its caller sent it: Request, else
// req-NN.
func (d Disclosure) RequestID() string {
	if d.Request != "" {
		return d.Request
	}
	return fmt.Sprintf("req-%02d", d.I)
}

// Reference returns the reference the accounting gives d
// (accounting.Reference): FixtureIndex stores each disclosure in a message
// of its own, the I+1-th of the chain of lookupd-0, when the disclosures
// written are in order of I from 0.
func (d Disclosure) Reference() string { return fmt.Sprintf("lookupd-0-%d-1", d.I+1) }

// Shown reports whether the officer's page shows d by default (exempt
// false, self false) or with the switches.
func (d Disclosure) Shown(exempt, self bool) bool {
	return (exempt || d.Purpose != "TREAT") && (self || d.Op != accounting.OperationSearch)
}

// The clients and purposes of the fixture: one of each is not in the
// shipped registries (deploy/registries), and TREAT is exempt there.
var (
	Clients  = []string{"billing-app", "onboarding", "robot"}
	Purposes = []string{"TREAT", "fraud-review", "LEGAL", "MARKETING"}
)

// Disclosures are the fixture's 60 disclosures, an hour apart from
// 2026-11-01: of Persons[i%3], by a client (in turn every four) and for a
// purpose (every three) in turn, one in ten a read of the accounting
// itself; the subject of the fifth is a spreadsheet formula.
func Disclosures() []Disclosure {
	var out []Disclosure
	for i := range 60 {
		d := Disclosure{I: i, Person: Persons[i%3], Client: Clients[(i/4)%3], Purpose: Purposes[(i/3)%4],
			Subject: fmt.Sprintf("clerk-%d", i), Op: "getAuthorizedSigners"}
		if i%10 == 9 {
			d.Op = accounting.OperationSearch
		}
		if i == 3 {
			d.Subject = "=2+3"
		}
		out = append(out, d)
	}
	return out
}

// FixtureIndex writes the ledger of the disclosures ds (on an in-process
// NATS server of the test's) and returns an index that has applied it,
// following the stream until the test ends.
func FixtureIndex(t *testing.T, ds []Disclosure) *accounting.Index {
	t.Helper()
	nc, js := testkit.StartNATS(t)
	var at time.Time
	l, err := ledger.New(nc, ledger.Config{Replica: "lookupd-0", Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		at = d.Time()
		p := events.DisclosedPerson{ID: d.Person}
		if d.Op != accounting.OperationSearch {
			p.SSNMode, p.DOB = "LAST4", d.I%2 == 0
		}
		if err := l.Disclose(context.Background(), events.Disclosure{RequestID: d.RequestID(), Subject: d.Subject, Client: d.Client,
			Operation: d.Op, Purpose: d.Purpose, Persons: []events.DisclosedPerson{p}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	x := OpenIndex(t)
	Follow(t, x, js)
	return x
}

// ShippedRegistry returns the registries of deploy/registries, the
// examples shipped with the service.
func ShippedRegistry(tb testing.TB) *accounting.Registry {
	tb.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		tb.Fatal(err)
	}
	r, err := accounting.LoadRegistry(filepath.Join(root, "deploy/registries/clients.yaml"), filepath.Join(root, "deploy/registries/purposes.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	return r
}
