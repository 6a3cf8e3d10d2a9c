package officer

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/prometheus/client_golang/prometheus"
)

// officerFixture is an officer's handler over an index of the fixture.
type officerFixture struct {
	h        http.Handler
	index    *accounting.Index
	registry *accounting.Registry
	reg      *prometheus.Registry
	mu       sync.Mutex
	recorded []accounting.Access
	fail     error // what Record answers
}

func (f *officerFixture) accesses() []accounting.Access {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]accounting.Access(nil), f.recorded...)
}

// newOfficerFixture writes the fixture's ledger, indexes it and returns
// the officer's handler over it, pages of pageSize rows.
func newOfficerFixture(t *testing.T, pageSize int) *officerFixture {
	t.Helper()
	return newOfficerFixtureOf(t, pageSize, accountingtest.Disclosures())
}

// newOfficerFixtureOf is newOfficerFixture over the disclosures ds, its
// Config changed by each of opts.
func newOfficerFixtureOf(t *testing.T, pageSize int, ds []accountingtest.Disclosure, opts ...func(*Config)) *officerFixture {
	t.Helper()
	x := accountingtest.FixtureIndex(t, ds)
	registry := accountingtest.ShippedRegistry(t)
	f := &officerFixture{index: x, registry: registry, reg: prometheus.NewRegistry()}
	cfg := Config{Index: x, Registry: registry, PageSize: pageSize, Registerer: f.reg,
		Now: func() time.Time { return time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC) },
		Status: func() accounting.IndexStatus {
			return accounting.IndexStatus{Applied: 60, CaughtUp: true, LedgerSince: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
		},
		Authorize: accountingtest.Authorize,
		Record: func(_ context.Context, a accounting.Access) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.fail != nil {
				return f.fail
			}
			f.recorded = append(f.recorded, a)
			return nil
		}}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	if f.h, err = New(cfg); err != nil {
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
