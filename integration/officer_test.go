//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/audittest"
	"github.com/lookup/persons/internal/testing/browsertest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// The registries of the officer's test: two recipients, and purposes one
// of which is exempt.
const (
	officerClients = `clients:
  - id: app-officer-bank
    organisation: Example Bank, Customer Onboarding
    address: 1 Bank Plaza, Columbus, OH 43215
    valid_from: 2020-01-01
  - id: app-officer-collect
    organisation: Acme Collections LLC
    address: 9 Debt Road, Dover, DE 19901
    valid_from: 2020-01-01
`
	officerPurposes = `purposes:
  - code: TREAT
    statement: Treatment of the person
    accounting: exempt
  - code: fraud-review
    statement: Review of a suspected fraud on the person's account
    accounting: accountable
  - code: LEGAL
    statement: Response to a subpoena or court order
    accounting: accountable
`
)

// officerIDs are the request ids of this test's loads, as the officer's
// pages and the letter show them.
var officerIDs = regexp.MustCompile(`officer-(?:fraud|legal|treat)-\d+`)

// TestOfficerPagesOfARealLedger (issue 37): lookupd serve answers audited
// reads from three callers at once (two recipients; purposes fraud-review
// and LEGAL, accountable, and TREAT, exempt); lookupd audit serve indexes
// the ledger they wrote. In headless Chromium, the officer's page lists
// each disclosure of a person exactly once across its pages (the exempt
// ones only when asked), so does the CSV export, and the letter for the
// person, printed to PDF, lists each accountable one exactly once and no
// exempt one.
func TestOfficerPagesOfARealLedger(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := startAuditedStage(ctx, t, "replica-officer")
	acct := startLookupd(ctx, t, lookupdConfig{network: st.nw, natsURL: "nats://nats:4222", volume: "officer-" + uuid.NewString(),
		jwks: st.is.jwks, args: []string{"audit", "serve"},
		env: map[string]string{"LOOKUP_AUDIT_STREAM": ledger.DefaultStream, "LOOKUP_ACCOUNTING_DIR": "/data", "LOOKUP_REPLICA_ID": "accounting",
			"LOOKUP_HTTP_ADDR": ":8080", "LOOKUP_ADMIN_ADDR": ":9090", "LOOKUP_OFFICER_PAGE_SIZE": "40",
			"LOOKUP_CLIENTS_FILE": "/etc/lookupd/clients.yaml", "LOOKUP_PURPOSES_FILE": "/etc/lookupd/purposes.yaml", "LOOKUP_REGISTRIES_STRICT": "true"},
		files: []testcontainers.ContainerFile{
			{Reader: strings.NewReader(officerClients), ContainerFilePath: "/etc/lookupd/clients.yaml", FileMode: 0o644},
			{Reader: strings.NewReader(officerPurposes), ContainerFilePath: "/etc/lookupd/purposes.yaml", FileMode: 0o644},
		}})
	acct.waitReady(t)

	// The audited load: three callers at once.
	var loads []*audittest.Reads
	for _, c := range []struct{ client, purpose, prefix string }{
		{"app-officer-bank", "fraud-review", "officer-fraud"},
		{"app-officer-collect", "LEGAL", "officer-legal"},
		{"app-officer-bank", "TREAT", "officer-treat"},
	} {
		tok := st.is.tokenWith(t, "read:persons read:persons:ssn", time.Hour, map[string]any{"azp": c.client, "sub": "clerk-" + c.prefix})
		r := audittest.Start(audittest.Config{URL: st.ld.api + signersPath(st.f.consumer), Token: tok, Workers: 3, Prefix: c.prefix,
			Headers: map[string]string{"Lookup-Purpose": c.purpose}})
		t.Cleanup(func() { r.Stop() })
		loads = append(loads, r)
	}
	var accountable, exempt []string
	for i, r := range loads {
		waitAnswers(t, "audited answers", r.OK, 50)
		answers := r.Stop()
		if r.Failed() > 0 {
			t.Fatalf("%d reads not answered 200", r.Failed())
		}
		if i < 2 {
			accountable = append(accountable, audittest.Released(answers)...)
		} else {
			exempt = append(exempt, audittest.Released(answers)...)
		}
	}
	all := slices.Sorted(slices.Values(append(slices.Clone(accountable), exempt...)))
	slices.Sort(accountable)
	person := st.f.signerBoth
	auditor := st.is.tokenWith(t, "read:audit", time.Hour, map[string]any{"azp": "privacy-desk", "sub": "officer"})
	s := &searcher{t: t, base: acct.api, token: auditor}
	checkSearchAnswered(t, s, []string{person}, answersOf(all), "jsonl") // the index has caught up

	ctx = browsertest.New(t, map[string]string{"Authorization": "Bearer " + auditor}, 3*time.Minute)
	t.Run("the page: each disclosure once, the exempt ones only when asked", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []string
		}{{"", accountable}, {"&exempt=1", all}} {
			got := officerPages(t, ctx, acct.api+"/officer/person?id="+person+tc.query)
			if !slices.Equal(slices.Sorted(slices.Values(got)), tc.want) {
				t.Errorf("the pages%s show %d disclosures (%d distinct), want each of the %d once", tc.query, len(got), len(distinct(got)), len(tc.want))
			}
		}
	})
	t.Run("the CSV: each disclosure once", func(t *testing.T) {
		for _, tc := range []struct {
			query string
			want  []string
		}{{"", accountable}, {"&exempt=1", all}} {
			r, err := testkit.HTTPGet(nil, acct.api+"/officer/person.csv?id="+person+tc.query, auditor, nil)
			if err != nil || r.Status != http.StatusOK {
				t.Fatalf("CSV: %d %v", r.Status, err)
			}
			rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
			if err != nil || len(rows) == 0 {
				t.Fatalf("CSV: %v, %d rows", err, len(rows))
			}
			col := slices.Index(rows[0], "caller_request_id") // beside our reference, the caller's id of each answer
			if col < 0 {
				t.Fatalf("CSV header %v has no caller_request_id", rows[0])
			}
			var got []string
			for _, row := range rows[1:] {
				got = append(got, row[col])
			}
			if !slices.Equal(slices.Sorted(slices.Values(got)), tc.want) {
				t.Errorf("the CSV%s holds %d rows, want each of the %d disclosures once", tc.query, len(got), len(tc.want))
			}
		}
	})
	t.Run("the letter, printed: each accountable disclosure once", func(t *testing.T) {
		today := time.Now().UTC().Format(time.DateOnly)
		if err := chromedp.Run(ctx, chromedp.Navigate(acct.api+"/officer/letter?id="+person), chromedp.WaitVisible(`input[name="name"]`, chromedp.ByQuery),
			chromedp.SetValue(`input[name="requested"]`, today, chromedp.ByQuery),
			chromedp.SendKeys(`input[name="name"]`, "Ann Example", chromedp.ByQuery),
			chromedp.SendKeys(`textarea[name="address"]`, "12 Elm Street\nSpringfield, IL 62701", chromedp.ByQuery),
			chromedp.Click(`button[type="submit"]`, chromedp.ByQuery), chromedp.WaitVisible(`article.letter`, chromedp.ByQuery)); err != nil {
			t.Fatalf("write the letter: %v", err)
		}
		text, _ := browsertest.PrintPDF(t, ctx)
		// The letter prints our references, not the callers' request ids:
		// the CSV gives each answer's reference beside its request id.
		r, err := testkit.HTTPGet(nil, acct.api+"/officer/person.csv?id="+person, auditor, nil)
		if err != nil || r.Status != http.StatusOK {
			t.Fatalf("CSV: %d %v", r.Status, err)
		}
		rows, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
		if err != nil || len(rows) == 0 {
			t.Fatalf("CSV: %v", err)
		}
		refCol, idCol := slices.Index(rows[0], "reference"), slices.Index(rows[0], "caller_request_id")
		var want []string
		for _, row := range rows[1:] {
			if slices.Contains(accountable, row[idCol]) {
				want = append(want, row[refCol])
			}
		}
		got := regexp.MustCompile(`(?m)^Reference (\S+)$`).FindAllStringSubmatch(text, -1)
		var refs []string
		for _, m := range got {
			refs = append(refs, m[1])
		}
		if len(want) != len(accountable) || !slices.Equal(slices.Sorted(slices.Values(refs)), slices.Sorted(slices.Values(want))) {
			t.Errorf("the letter lists %d disclosures, want each of the %d accountable ones once", len(refs), len(accountable))
		}
		words := browsertest.Words(text)
		for _, s := range []string{"Example Bank, Customer Onboarding", "Acme Collections LLC", "9 Debt Road, Dover, DE 19901",
			"Response to a subpoena or court order", "social security number (whole), date of birth", "Page 1 of "} {
			if !strings.Contains(words, s) {
				t.Errorf("the letter lacks %q", s)
			}
		}
		if strings.Contains(words, "Treatment of the person") {
			t.Error("the letter lists an exempt disclosure")
		}
	})
}

// officerPages returns the request ids the officer's pages of a search
// show, following their "Next page" links.
func officerPages(t *testing.T, ctx context.Context, target string) []string {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(target), chromedp.WaitVisible("section.status", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	return browsertest.EveryPage(t, ctx, officerIDs, "section.status")
}

// answersOf returns released answers of the request ids ids.
func answersOf(ids []string) []audittest.Answer {
	out := make([]audittest.Answer, len(ids))
	for i, id := range ids {
		out[i] = audittest.Answer{ID: id, Status: http.StatusOK}
	}
	return out
}

func distinct(s []string) []string { return slices.Compact(slices.Sorted(slices.Values(s))) }
