package officer

import (
	"encoding/csv"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// personLinks are the persons of a page's rows, each a link to the
// person's page.
var personLinks = regexp.MustCompile(`<a href="/officer/person\?id=([0-9a-f-]{36})">`)

// wantRecipient returns the request ids of the fixture's disclosures the
// search by recipient shows, newest first.
func wantRecipient(exempt, self bool, keep func(accountingtest.Disclosure) bool) []string {
	var out []string
	for _, d := range slices.Backward(accountingtest.Disclosures()) {
		if d.Shown(exempt, self) && keep(d) {
			out = append(out, d.RequestID())
		}
	}
	return out
}

// recipientPages returns the request ids of every page of the search at
// target, and checks that each page view recorded the persons it showed,
// each once.
func recipientPages(t *testing.T, f *officerFixture, target string) []string {
	t.Helper()
	var got []string
	for n := 0; target != ""; n++ {
		before := len(f.accesses())
		rec := accountingtest.Get(f.h, target, "officer")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
		body := rec.Body.String()
		for _, m := range requestIDs.FindAllStringSubmatch(body, -1) {
			got = append(got, m[1])
		}
		var shown []string
		for _, m := range personLinks.FindAllStringSubmatch(body, -1) {
			if !slices.Contains(shown, m[1]) {
				shown = append(shown, m[1])
			}
		}
		acc := f.accesses()
		if len(acc) != before+1 {
			t.Fatalf("GET %s recorded %d accesses, want 1", target, len(acc)-before)
		}
		if a := acc[before]; a.Operation != accounting.OperationViewRecipient || a.Person != "" || !slices.Equal(a.Persons, shown) ||
			a.Caller.Subject != "officer" || len(a.RequestID) != 32 || rec.Header().Get("X-Request-Id") != a.RequestID {
			t.Fatalf("GET %s recorded %+v, want a view by officer of the persons shown %v", target, a, shown)
		}
		target = ""
		if m := nextPageLink.FindStringSubmatch(body); m != nil {
			target = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		if n > 50 {
			t.Fatal("no last page")
		}
	}
	return got
}

func TestRecipientPagesShowEachDisclosureOnce(t *testing.T) {
	f := newOfficerFixture(t, 3)
	client := func(c string) func(accountingtest.Disclosure) bool {
		return func(d accountingtest.Disclosure) bool { return d.Client == c }
	}
	for _, tc := range []struct {
		name, query  string
		exempt, self bool
		keep         func(accountingtest.Disclosure) bool
	}{
		{"client", "client=billing-app", false, false, client("billing-app")},
		{"client, exempt and reads", "client=onboarding&exempt=1&self=1", true, true, client("onboarding")},
		{"client and purpose", "client=onboarding&purpose=LEGAL", false, false,
			func(d accountingtest.Disclosure) bool { return d.Client == "onboarding" && d.Purpose == "LEGAL" }},
		{"dates", "client=billing-app&from=2026-11-02&to=2026-11-02&exempt=1", true, false,
			func(d accountingtest.Disclosure) bool { return d.Client == "billing-app" && d.I >= 24 && d.I < 48 }},
		{"subject", "subject=clerk-15", false, false, func(d accountingtest.Disclosure) bool { return d.Subject == "clerk-15" }},
		{"client and subject", "client=billing-app&subject=clerk-15", false, false,
			func(d accountingtest.Disclosure) bool { return d.Subject == "clerk-15" }},
		{"another client's subject", "client=onboarding&subject=clerk-15", false, false, func(accountingtest.Disclosure) bool { return false }},
		{"no row", "client=onboarding&to=2026-10-31", false, false, func(accountingtest.Disclosure) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := recipientPages(t, f, "/officer/recipient?"+tc.query)
			w := wantRecipient(tc.exempt, tc.self, tc.keep)
			if !slices.Equal(got, w) {
				t.Errorf("pages show %v, want %v", got, w)
			}
			if len(w) == 0 != (tc.name == "no row" || tc.name == "another client's subject") {
				t.Errorf("the case shows %d rows: it tests nothing", len(w))
			}
		})
	}
}

func TestRecipientPageInWords(t *testing.T) {
	f := newOfficerFixture(t, 100)
	body := accountingtest.Get(f.h, "/officer/recipient?client=billing-app&exempt=1&self=1", "officer").Body.String()
	for _, s := range []string{
		"<strong>Northwind Billing Services LLC</strong>", "100 Main Street, Springfield, IL 62701", // billing-app in 2026
		"client <code>billing-app</code>",
		"social security number (last four digits), date of birth",
		"Review of a suspected fraud on the person&#39;s account",
		"this accounting of disclosures (who read it)",
		`<a href="/officer/person?id=` + accountingtest.Persons[0] + `">`, `<a href="/officer/person?id=` + accountingtest.Persons[2] + `">`,
		"subject <code>clerk-1</code>", "<code>req-01</code>", "lookupd-0",
		"The audit ledger goes back to 2026-11-01", "stream sequence 60, up to date with the ledger",
		`href="/officer/recipient.csv?`, `<a href="/officer/person">Search by person</a>`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	if n := strings.Count(body, "<strong>Northwind Billing Services LLC</strong>"); n != 1 {
		t.Errorf("the organisation is shown %d times, want once, above the table", n)
	}
	robot := accountingtest.Get(f.h, "/officer/recipient?subject=clerk-21", "officer").Body.String() // robot is in no registry
	if !strings.Contains(robot, "client not in the registry") || !strings.Contains(robot, "<code>robot</code>") ||
		!strings.Contains(robot, "unknown purpose code MARKETING") {
		t.Errorf("the page of an unknown client does not say so:\n%s", robot)
	}
	person := accountingtest.Get(f.h, "/officer/person", "officer").Body.String()
	if !strings.Contains(person, `<a href="/officer/recipient">Search by recipient</a>`) {
		t.Error("the person's page has no link to the search by recipient")
	}
}

func TestRecipientEmptyForm(t *testing.T) {
	f := newOfficerFixture(t, 10)
	for _, target := range []string{"/officer/recipient", "/officer/recipient?client=&subject=&from=&to=&purpose="} {
		rec := accountingtest.Get(f.h, target, "officer")
		if b := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(b, `<form method="get" action="/officer/recipient"`) ||
			strings.Contains(b, `class="error"`) || requestIDs.MatchString(b) {
			t.Errorf("GET %s = %d, want the empty form:\n%s", target, rec.Code, b)
		}
	}
	if a := f.accesses(); len(a) != 0 {
		t.Errorf("the empty form recorded %+v", a)
	}
}

func TestRecipientBadInputRecordsNothing(t *testing.T) {
	f := newOfficerFixture(t, 10)
	for _, tc := range []struct{ name, query, says string }{
		{"unknown field", "client=billing-app&id=" + accountingtest.Persons[0], "&#34;id&#34; is not a field of this search"},
		{"twice", "client=billing-app&client=onboarding", "is given more than once"},
		{"reversed range", "client=billing-app&from=2026-12-01&to=2026-11-01", "The date range is reversed"},
		{"bad date", "client=billing-app&to=2026-11-31", "is not a date"},
		{"unknown client", "client=robot", "is not a client of the clients registry"},
		{"client not a code", "client=billing+app", "is not a client id"},
		{"subject not a code", "subject=" + strings.Repeat("x", 65), "is not a token&#39;s subject"},
		{"subject with a control character", "subject=clerk%01", "is not a token&#39;s subject"},
		{"unknown purpose", "subject=clerk-1&purpose=MARKETING", "is not a code of the purposes registry"},
		{"bad switch", "client=billing-app&self=yes", "must be 1 or 0"},
		{"bad cursor", "client=billing-app&after=zz", "not a page this service gave"},
		{"no recipient", "from=2026-11-01", "A client or a subject is required"},
		{"no recipient, a box ticked", "client=&exempt=1", "A client or a subject is required"},
	} {
		for _, path := range []string{"/officer/recipient?", "/officer/recipient.csv?"} {
			rec := accountingtest.Get(f.h, path+tc.query, "officer")
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), tc.says) || requestIDs.MatchString(rec.Body.String()) {
				t.Errorf("%s: GET %s = %d, want 400 saying %q and no disclosure:\n%s", tc.name, path+tc.query, rec.Code, tc.says, rec.Body)
			}
		}
	}
	if a := f.accesses(); len(a) != 0 {
		t.Errorf("refused searches recorded: %+v", a)
	}
}

func TestRecipientAuthAndRecordFailure(t *testing.T) {
	f := newOfficerFixture(t, 10)
	paths := []string{"/officer/recipient?client=billing-app", "/officer/recipient.csv?client=billing-app"}
	for token, status := range map[string]int{"": http.StatusUnauthorized, "reader": http.StatusForbidden} {
		for _, path := range paths {
			if rec := accountingtest.Get(f.h, path, token); rec.Code != status || requestIDs.MatchString(rec.Body.String()) || personLinks.MatchString(rec.Body.String()) {
				t.Errorf("GET %s with token %q = %d, want %d and no disclosure", path, token, rec.Code, status)
			}
		}
	}
	f.fail = errors.New("ledger down")
	for _, path := range paths {
		if rec := accountingtest.Get(f.h, path, "officer"); rec.Code != http.StatusServiceUnavailable || requestIDs.MatchString(rec.Body.String()) ||
			!strings.Contains(rec.Body.String(), "could not be recorded") {
			t.Errorf("GET %s unrecorded = %d, want 503 and no disclosure:\n%s", path, rec.Code, rec.Body)
		}
	}
}

func TestRecipientHeaders(t *testing.T) {
	f := newOfficerFixture(t, 10)
	for _, target := range []string{"/officer/recipient", "/officer/recipient?client=billing-app", "/officer/recipient?client=x+y",
		"/officer/recipient.csv?client=billing-app"} {
		rec := accountingtest.Get(f.h, target, "officer")
		h := rec.Header()
		if h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" ||
			!strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Errorf("GET %s: headers %v, want no-store, nosniff, no-referrer and the strict CSP", target, h)
		}
		if b := strings.ToLower(rec.Body.String()); strings.Contains(b, "<script") || strings.Contains(b, " style=") || strings.Contains(b, "<style") {
			t.Errorf("GET %s holds a script or an inline style", target)
		}
	}
}

func TestRecipientCSVExport(t *testing.T) {
	f := newOfficerFixture(t, 2) // the export is every row, not a page
	rec := accountingtest.Get(f.h, "/officer/recipient.csv?client=billing-app&exempt=1", "officer")
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Disposition") != `attachment; filename="accounting-recipient-billing-app-20261120.csv"` {
		t.Fatalf("GET csv = %d, Content-Disposition %q", rec.Code, rec.Header().Get("Content-Disposition"))
	}
	rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got, shown []string
	for _, r := range rows[1:] {
		got = append(got, r[10]) // the caller's request id
		if !slices.Contains(shown, r[1]) {
			shown = append(shown, r[1])
		}
		if r[2] != "billing-app" || r[3] != "Northwind Billing Services LLC" {
			t.Errorf("row %q: want billing-app, Northwind Billing Services LLC", r)
		}
		for _, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q could run as a formula", cell)
			}
		}
	}
	if w := wantRecipient(true, false, func(d accountingtest.Disclosure) bool { return d.Client == "billing-app" }); !slices.Equal(got, w) {
		t.Errorf("CSV rows %v, want %v", got, w)
	}
	if !strings.Contains(rec.Body.String(), ",'=2+3,") {
		t.Errorf("the formula subject is not quoted:\n%s", rec.Body)
	}
	if a := f.accesses(); len(a) != 1 || a[0].Operation != accounting.OperationExportRecipient || !slices.Equal(a[0].Persons, shown) || len(shown) != 3 {
		t.Errorf("recorded %+v, want one export of the persons %v", a, shown)
	}
}

func TestFileSafe(t *testing.T) {
	for in, want := range map[string]string{"billing-app-": "billing-app", "-clerk 1": "clerk_1", `a"b;c/d`: "a_b_c_d", "ok.v2_x": "ok.v2_x"} {
		if got := fileSafe(in); got != want {
			t.Errorf("fileSafe(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLedgerRecorderRecordsEachPerson: an Access of several persons is a
// record in each one's accounting; one of none records nothing.
func TestLedgerRecorderRecordsEachPerson(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	l, err := ledger.New(nc, ledger.Config{Replica: "accounting-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(t.Context()) })
	record := accounting.LedgerRecorder(l)
	caller := auth.Caller{Subject: "officer", Client: "privacy-desk"}
	for _, acc := range []accounting.Access{
		{RequestID: "r-none", Caller: caller, Operation: accounting.OperationViewRecipient},
		{RequestID: "r-two", Caller: caller, Operation: accounting.OperationViewRecipient, Persons: []string{accountingtest.Persons[0], accountingtest.Persons[1]}},
	} {
		if err := record(t.Context(), acc); err != nil {
			t.Fatal(err)
		}
	}
	for i, want := range []int{1, 1, 0} {
		recs, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, accountingtest.Persons[i], time.Time{}, time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != want {
			t.Fatalf("%s: %d records, want %d", accountingtest.Persons[i], len(recs), want)
		}
		if want == 1 && (recs[0].RequestID != "r-two" || recs[0].Operation != accounting.OperationViewRecipient || recs[0].Persons != 2 || recs[0].SSNMode != "") {
			t.Errorf("%s: record %+v, want the view by recipient of two persons, nothing disclosed", accountingtest.Persons[i], recs[0])
		}
	}
}

// A page refused (401, 403) shows nothing of the registries: no client,
// organisation or purpose to one not allowed to read the accounting.
func TestRefusedPagesShowNoRegistry(t *testing.T) {
	f := newOfficerFixture(t, 10)
	var secrets []string
	for _, id := range f.registry.ClientIDs() {
		secrets = append(secrets, `"`+id+`"`)
		if c, ok := f.registry.Client(id, time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)); ok {
			secrets = append(secrets, c.Organisation)
		}
	}
	for _, code := range f.registry.PurposeCodes() {
		p, _ := f.registry.Purpose(code)
		secrets = append(secrets, `"`+code+`"`, p.Statement)
	}
	if len(secrets) < 6 {
		t.Fatalf("the shipped registries hold %d codes, want several", len(secrets))
	}
	for _, target := range []string{"/officer/recipient", "/officer/recipient?client=billing-app", "/officer/recipient.csv?client=billing-app",
		"/officer/person", "/officer/person?id=" + accountingtest.Persons[0], "/officer/letter?id=" + accountingtest.Persons[0]} {
		for token, status := range map[string]int{"": http.StatusUnauthorized, "reader": http.StatusForbidden} {
			rec := accountingtest.Get(f.h, target, token)
			body := strings.ReplaceAll(rec.Body.String(), "&#39;", "'")
			if rec.Code != status {
				t.Errorf("GET %s with token %q = %d, want %d", target, token, rec.Code, status)
			}
			for _, s := range secrets {
				if strings.Contains(body, s) {
					t.Errorf("GET %s with token %q (%d) shows %s of the registries", target, token, rec.Code, s)
				}
			}
		}
	}
}
