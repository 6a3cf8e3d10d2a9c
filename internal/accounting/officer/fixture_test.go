package accounting

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/testkit"
)

// disclosure is one disclosure of the officer's fixture, as the tests
// expect to see it.
type disclosure struct {
	i                                    int
	person, client, subject, purpose, op string
	at                                   time.Time // zero: i hours after 2026-11-01
}

// time returns when d was disclosed.
func (d disclosure) time() time.Time {
	if !d.at.IsZero() {
		return d.at
	}
	return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(d.i) * time.Hour)
}

// The clients and purposes of the fixture: one of each is not in the
// shipped registries (deploy/registries), and TREAT is exempt there.
var (
	fixtureClients  = []string{"billing-app", "onboarding", "robot"}
	fixturePurposes = []string{"TREAT", "fraud-review", "LEGAL", "MARKETING"}
)

// officerDisclosures are the fixture's 60 disclosures, an hour apart from
// 2026-11-01: of persons[i%3], by a client (in turn every four) and for a
// purpose (every three) in turn, one
// in ten a read of the accounting itself; the subject of the fifth is a
// spreadsheet formula.
func officerDisclosures() []disclosure {
	var out []disclosure
	for i := range 60 {
		d := disclosure{i: i, person: persons[i%3], client: fixtureClients[(i/4)%3], purpose: fixturePurposes[(i/3)%4],
			subject: fmt.Sprintf("clerk-%d", i), op: "getAuthorizedSigners"}
		if i%10 == 9 {
			d.op = OperationSearch
		}
		if i == 3 {
			d.subject = "=2+3"
		}
		out = append(out, d)
	}
	return out
}

func (d disclosure) requestID() string { return fmt.Sprintf("req-%02d", d.i) }

// shown reports whether the page shows d by default (exempt false, self
// false) or with the switches.
func (d disclosure) shown(exempt, self bool) bool {
	return (exempt || d.purpose != "TREAT") && (self || d.op != OperationSearch)
}

// officerFixture is an officer's handler over an index of the fixture.
type officerFixture struct {
	h        http.Handler
	index    *Index
	registry *Registry
	reg      *prometheus.Registry
	mu       sync.Mutex
	recorded []Access
	fail     error // what Record answers
}

func (f *officerFixture) accesses() []Access {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Access(nil), f.recorded...)
}

// newOfficerFixture writes the fixture's ledger, indexes it and returns
// the officer's handler over it, pages of pageSize rows.
func newOfficerFixture(t *testing.T, pageSize int) *officerFixture {
	t.Helper()
	return newOfficerFixtureOf(t, pageSize, officerDisclosures())
}

// newOfficerFixtureOf is newOfficerFixture over the disclosures ds.
func newOfficerFixtureOf(t *testing.T, pageSize int, ds []disclosure) *officerFixture {
	t.Helper()
	nc, js := testkit.StartNATS(t)
	var at time.Time
	l, err := ledger.New(nc, ledger.Config{Replica: "lookupd-0", Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		at = d.time()
		p := events.DisclosedPerson{ID: d.person}
		if d.op != OperationSearch {
			p.SSNMode, p.DOB = "LAST4", d.i%2 == 0
		}
		if err := l.Disclose(context.Background(), events.Disclosure{RequestID: d.requestID(), Subject: d.subject, Client: d.client,
			Operation: d.op, Purpose: d.purpose, Persons: []events.DisclosedPerson{p}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	x := openIndex(t)
	follow(t, x, js)
	registry := shippedRegistry(t)
	f := &officerFixture{index: x, registry: registry, reg: prometheus.NewRegistry()}
	f.h, err = NewOfficer(OfficerConfig{Index: x, Registry: registry, PageSize: pageSize, Registerer: f.reg,
		Now: func() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) },
		Status: func() IndexStatus {
			return IndexStatus{Applied: 60, CaughtUp: true, LedgerSince: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
		},
		Authorize: func(r *http.Request) (auth.Caller, error) {
			switch r.Header.Get("Authorization") {
			case "Bearer officer":
				return auth.Caller{Subject: "officer", Client: "privacy-desk"}, nil
			case "Bearer reader":
				return auth.Caller{}, ErrForbidden
			}
			return auth.Caller{}, errors.New("no token")
		},
		Record: func(_ context.Context, a Access) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.fail != nil {
				return f.fail
			}
			f.recorded = append(f.recorded, a)
			return nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// unknown returns the count of unknown codes of kind shown so far.
func (f *officerFixture) unknown(t *testing.T, kind string) float64 {
	t.Helper()
	mfs, err := f.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if mf.GetName() == MetricUnknownCodes && m.GetLabel()[0].GetValue() == kind {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}
