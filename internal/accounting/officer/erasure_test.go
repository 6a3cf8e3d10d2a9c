package officer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/testing/accountingtest"
)

// erasurePage returns the person page of person with Config.Erasure
// answering rep and err, and what the page logged.
func erasurePage(t *testing.T, person string, rep erasure.Report, err error) (page, logged string) {
	t.Helper()
	var log bytes.Buffer
	var asked []string
	f := newOfficerFixtureOf(t, 10, accountingtest.Disclosures(), func(c *Config) {
		c.Erasure = func(ctx context.Context, id string) (erasure.Report, error) {
			if _, ok := ctx.Deadline(); !ok {
				t.Error("the evidence is read without a deadline")
			}
			asked = append(asked, id)
			return rep, err
		}
		c.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	rec := accountingtest.Get(f.h, "/officer/person?id="+strings.ToUpper(person), "officer")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET = %d %s", rec.Code, rec.Body)
	}
	if len(asked) != 1 || asked[0] != person {
		t.Errorf("the evidence was asked of %v, want once of %s (in lower case)", asked, person)
	}
	return rec.Body.String(), log.String()
}

func TestPersonPageShowsTheErasure(t *testing.T) {
	person := accountingtest.Persons[0]
	consumer := "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01"
	deleted := time.Date(2026, 11, 18, 14, 3, 7, 0, time.FixedZone("CET", 3600))
	cleared := time.Date(2026, 11, 18, 13, 5, 0, 0, time.UTC)
	places := func(snapshots int) []erasure.Place {
		return []erasure.Place{{Place: "stream", Name: "PERSONS", At: cleared}, {Place: "dead_letters", Name: "PERSONS_DLQ", At: cleared},
			{Place: "snapshots", Name: "lookup-snapshots", Remains: snapshots}, {Place: "replica", Name: "replica-<b>a</b>", Remains: 3}}
	}
	for _, tc := range []struct {
		name string
		rep  erasure.Report
		err  error
		want []string // in this order
		not  []string
	}{
		{name: "complete", rep: erasure.Report{PersonID: person, Entities: []erasure.EntityStatus{{Kind: "consumer", ID: person,
			Deleted: true, DeletionSeq: 42, DeletedAt: deleted, Complete: true, CompletedAt: cleared,
			Places: places(0)[:3]}}}, want: []string{`<h2 id="erasure">Erasure</h2>`, "<h3>Consumer <code>" + person + "</code></h3>",
			"Deleted on 2026-11-18 13:03:07 UTC (stream sequence 42).",
			`<th scope="col">Place</th><th scope="col">Name</th><th scope="col">What remains</th><th scope="col">Cleared at</th>`,
			`<tr><th scope="row">Event stream</th><td><code>PERSONS</code></td><td>nothing</td><td class="date">2026-11-18 13:05:00 UTC</td></tr>`,
			`<tr><th scope="row">Dead letters</th><td><code>PERSONS_DLQ</code></td><td>nothing</td>`,
			`<tr><th scope="row">Snapshots</th><td><code>lookup-snapshots</code></td><td>nothing</td>`,
			"Erasure complete on 2026-11-18 13:05:00 UTC."},
			not: []string{"not complete", "with consumer"}},
		{name: "not complete, a signer erased with its consumer", rep: erasure.Report{PersonID: person, Entities: []erasure.EntityStatus{{
			Kind: "authorized_signer", ID: person, ConsumerID: consumer, Deleted: true, DeletionSeq: 42, DeletedAt: deleted,
			ErasedWith: consumer, Places: places(-1)}}},
			want: []string{"<h3>Authorized signer of consumer " + consumer + " <code>" + person + "</code></h3>",
				"(stream sequence 42), with consumer <code>" + consumer + "</code>.",
				`<tr><th scope="row">Snapshots</th><td><code>lookup-snapshots</code></td><td>not yet cleared</td><td class="date"></td></tr>`,
				`<tr><th scope="row">Replica&#39;s files</th><td><code>replica-&lt;b&gt;a&lt;/b&gt;</code></td><td>3</td>`,
				"Erasure not complete."},
			not: []string{"Erasure complete", "<b>a</b>"}},
		{name: "none", rep: erasure.Report{PersonID: person},
			want: []string{`<h2 id="erasure">Erasure</h2>`, "No deletion of this person is recorded."}, not: []string{"<h3>", "Erasure not complete"}},
		{name: "error", err: errors.New("erasure bucket \"lookup-erasure\": nats: permissions violation for subscription"),
			want: []string{`<h2 id="erasure">Erasure</h2>`, `<p class="error" role="alert">The erasure's evidence could not be read.`},
			not:  []string{"permissions", "lookup-erasure", "No deletion"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page, logged := erasurePage(t, person, tc.rep, tc.err)
			// The accounting of disclosures is still shown, above.
			_, rest, ok := strings.Cut(page, `<table class="disclosures">`)
			if !ok {
				t.Fatal("the disclosures are not shown")
			}
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("the page lacks, after the disclosures and what precedes, %q:\n%s", w, page)
				}
				rest = rest[i+len(w):]
			}
			for _, n := range tc.not {
				if strings.Contains(page, n) {
					t.Errorf("the page shows %q", n)
				}
			}
			if failed := strings.Contains(logged, "permissions violation"); failed != (tc.err != nil) {
				t.Errorf("logged %q", logged)
			}
		})
	}
}

// TestPersonPageWithoutErasure: without Config.Erasure, and on the empty
// form, there is no section.
func TestPersonPageWithoutErasure(t *testing.T) {
	f := newOfficerFixture(t, 10)
	rec := accountingtest.Get(f.h, "/officer/person?id="+accountingtest.Persons[0], "officer")
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), "Erasure") {
		t.Errorf("without Config.Erasure: %d\n%s", rec.Code, rec.Body)
	}
	page, _ := erasurePage(t, accountingtest.Persons[0], erasure.Report{}, nil)
	if !strings.Contains(page, "Erasure") {
		t.Fatal("no section with Config.Erasure")
	}
	g := newOfficerFixtureOf(t, 10, accountingtest.Disclosures(), func(c *Config) {
		c.Erasure = func(context.Context, string) (erasure.Report, error) {
			t.Error("the evidence was read for the empty form")
			return erasure.Report{}, nil
		}
	})
	if rec := accountingtest.Get(g.h, "/officer/person", "officer"); strings.Contains(rec.Body.String(), "Erasure") {
		t.Errorf("the empty form shows the section:\n%s", rec.Body)
	}
}
