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
	"github.com/lookup/persons/internal/testing/accountingtest"
)

// requestIDs are the request ids of a page's rows, in order.
var requestIDs = regexp.MustCompile(`<code>(req-\d\d)</code>`)

// nextPageLink is the address of a page's next page.
var nextPageLink = regexp.MustCompile(`<a href="([^"]+)" rel="next">`)

// want returns the request ids of person's disclosures the page shows,
// newest first.
func want(person string, exempt, self bool, keep func(accountingtest.Disclosure) bool) []string {
	var out []string
	for _, d := range slices.Backward(accountingtest.Disclosures()) {
		if d.Person == person && d.Shown(exempt, self) && (keep == nil || keep(d)) {
			out = append(out, d.RequestID())
		}
	}
	return out
}

// pages returns the request ids of every page of the search at target.
func pages(t *testing.T, f *officerFixture, target string) []string {
	t.Helper()
	var got []string
	for n := 0; target != ""; n++ {
		rec := accountingtest.Get(f.h, target, "officer")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
		for _, m := range requestIDs.FindAllStringSubmatch(rec.Body.String(), -1) {
			got = append(got, m[1])
		}
		target = ""
		if m := nextPageLink.FindStringSubmatch(rec.Body.String()); m != nil {
			target = strings.ReplaceAll(m[1], "&amp;", "&")
		}
		if n > 50 {
			t.Fatal("no last page")
		}
	}
	return got
}

func TestOfficerPagesShowEachDisclosureOnce(t *testing.T) {
	f := newOfficerFixture(t, 3)
	for _, tc := range []struct {
		name, query  string
		exempt, self bool
		keep         func(accountingtest.Disclosure) bool
	}{
		{"default", "", false, false, nil},
		{"exempt", "&exempt=1", true, false, nil},
		{"self", "&self=1", false, true, nil},
		{"all", "&exempt=1&self=1", true, true, nil},
		{"purpose", "&purpose=LEGAL", false, false, func(d accountingtest.Disclosure) bool { return d.Purpose == "LEGAL" }},
		{"recipient", "&recipient=onboarding&exempt=1", true, false, func(d accountingtest.Disclosure) bool { return d.Client == "onboarding" }},
		{"dates", "&from=2026-11-02&to=2026-11-02&exempt=1", true, false, func(d accountingtest.Disclosure) bool { return d.I >= 24 && d.I < 48 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := pages(t, f, "/officer/person?id="+accountingtest.Persons[1]+tc.query)
			w := want(accountingtest.Persons[1], tc.exempt, tc.self, tc.keep)
			if !slices.Equal(got, w) || len(w) == 0 {
				t.Errorf("pages show %v, want %v", got, w)
			}
		})
	}
	for _, a := range f.accesses() {
		if a.Operation != accounting.OperationView || a.Person != accountingtest.Persons[1] || a.Caller.Subject != "officer" || len(a.RequestID) != 32 {
			t.Fatalf("recorded %+v, want each view by officer of %s", a, accountingtest.Persons[1])
		}
	}
}

func TestOfficerPageInWords(t *testing.T) {
	f := newOfficerFixture(t, 100)
	body := accountingtest.Get(f.h, "/officer/person?id="+accountingtest.Persons[0]+"&exempt=1&self=1", "officer").Body.String()
	for _, s := range []string{
		"Northwind Billing Services LLC", "100 Main Street, Springfield, IL 62701", // billing-app in 2026
		"social security number (last four digits), date of birth",
		"Review of a suspected fraud on the person&#39;s account",
		"unknown purpose code MARKETING", "client not in the registry", // robot
		"this accounting of disclosures (who read it)",
		"The index holds this person's records from 2026-11-01", "The audit ledger goes back to 2026-11-01",
		"stream sequence 60, up to date with the ledger", `href="/officer/person.csv?`,
	} {
		if !strings.Contains(body, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	if n := f.unknown(t, "purpose"); n == 0 {
		t.Errorf("%s{kind=purpose} = %v after showing an unknown purpose", MetricUnknownCodes, n)
	}
	if n := f.unknown(t, "client"); n == 0 {
		t.Errorf("%s{kind=client} = %v after showing an unknown client", MetricUnknownCodes, n)
	}
}

func TestOfficerBadInputRecordsNothing(t *testing.T) {
	f := newOfficerFixture(t, 10)
	for _, tc := range []struct{ name, query, says string }{
		{"malformed id", "id=12345", "is not a person id"},
		{"id not hex", "id=gggggggg-1111-4111-8111-111111111111", "is not a person id"}, // upper case is taken: TestUpperCasePersonID
		{"reversed range", "id=" + accountingtest.Persons[0] + "&from=2026-12-01&to=2026-11-01", "The date range is reversed"},
		{"bad date", "id=" + accountingtest.Persons[0] + "&from=01/11/2026", "is not a date"},
		{"unknown recipient", "id=" + accountingtest.Persons[0] + "&recipient=robot", "is not a client of the clients registry"},
		{"unknown purpose", "id=" + accountingtest.Persons[0] + "&purpose=MARKETING", "is not a code of the purposes registry"},
		{"bad switch", "id=" + accountingtest.Persons[0] + "&exempt=yes", "must be 1 or 0"},
		{"unknown field", "id=" + accountingtest.Persons[0] + "&ssn=123", "is not a field of this search"},
		{"twice", "id=" + accountingtest.Persons[0] + "&id=" + accountingtest.Persons[1], "is given more than once"},
		{"bad cursor", "id=" + accountingtest.Persons[0] + "&after=zz", "not a page this service gave"},
		{"no id", "from=2026-11-01", "A person id is required"},
	} {
		for _, path := range []string{"/officer/person?", "/officer/person.csv?"} {
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

func TestOfficerAuthAndRecordFailure(t *testing.T) {
	f := newOfficerFixture(t, 10)
	for token, status := range map[string]int{"": http.StatusUnauthorized, "reader": http.StatusForbidden} {
		for _, path := range []string{"/officer/person?id=" + accountingtest.Persons[0], "/officer/person.csv?id=" + accountingtest.Persons[0]} {
			if rec := accountingtest.Get(f.h, path, token); rec.Code != status || requestIDs.MatchString(rec.Body.String()) {
				t.Errorf("GET %s with token %q = %d, want %d and no disclosure", path, token, rec.Code, status)
			}
		}
	}
	f.fail = errors.New("ledger down")
	for _, path := range []string{"/officer/person?id=" + accountingtest.Persons[0], "/officer/person.csv?id=" + accountingtest.Persons[0]} {
		if rec := accountingtest.Get(f.h, path, "officer"); rec.Code != http.StatusServiceUnavailable || requestIDs.MatchString(rec.Body.String()) {
			t.Errorf("GET %s unrecorded = %d, want 503 and no disclosure:\n%s", path, rec.Code, rec.Body)
		}
	}
}

func TestOfficerHeaders(t *testing.T) {
	f := newOfficerFixture(t, 10)
	for _, target := range []string{"/officer/person", "/officer/person?id=" + accountingtest.Persons[0], "/officer/person?id=x",
		"/officer/person.csv?id=" + accountingtest.Persons[0], "/officer/officer.css"} {
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
	if ct := accountingtest.Get(f.h, "/officer/officer.css", "officer").Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/css") {
		t.Errorf("the stylesheet's Content-Type = %q", ct)
	}
}

func TestOfficerCSVExport(t *testing.T) {
	f := newOfficerFixture(t, 2) // the export is every row, not a page
	rec := accountingtest.Get(f.h, "/officer/person.csv?id="+accountingtest.Persons[0]+"&exempt=1", "officer")
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Disposition"), "attachment;") {
		t.Fatalf("GET csv = %d, Content-Disposition %q", rec.Code, rec.Header().Get("Content-Disposition"))
	}
	rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rows[1:] {
		got = append(got, r[9]) // the caller's request id
		for _, cell := range r {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("cell %q could run as a formula", cell)
			}
		}
	}
	if w := want(accountingtest.Persons[0], true, false, nil); !slices.Equal(got, w) {
		t.Errorf("CSV rows %v, want %v", got, w)
	}
	if !strings.Contains(rec.Body.String(), ",'=2+3,") {
		t.Errorf("the formula subject is not quoted:\n%s", rec.Body)
	}
	if a := f.accesses(); len(a) != 1 || a[0].Operation != accounting.OperationExport {
		t.Errorf("recorded %+v, want one export", a)
	}
}

func TestCSVCells(t *testing.T) {
	got := csvCells("=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx", "plain", "", "a=b")
	want := []string{"'=1+1", "'+1", "'-1", "'@SUM(A1)", "'\tx", "'\rx", "plain", "", "a=b"}
	if !slices.Equal(got, want) {
		t.Errorf("csvCells = %q, want %q", got, want)
	}
}

// A disclosure whose token named no client (no azp, no client_id) is
// shown as such, in the pages, the CSVs and the letter; a client named
// "none" is shown as that client.
func TestNoClientIsNotAClientNamedNone(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 1, h, 0, 0, 0, time.UTC) }
	ds := []accountingtest.Disclosure{
		{I: 0, At: at(1), Client: "", Subject: ""},
		{I: 1, At: at(2), Client: "none", Subject: "none"},
	}
	for i := range ds {
		ds[i].Person, ds[i].Purpose, ds[i].Op = accountingtest.Persons[0], "LEGAL", "getAuthorizedSigners"
	}
	f := newOfficerFixtureOf(t, 10, ds)
	row := func(body, ref string) string { // the table row of the reference
		i := strings.Index(body, "<code>"+ref+"</code>")
		if i < 0 {
			t.Fatalf("no row of %s in:\n%s", ref, body)
		}
		return body[strings.LastIndex(body[:i], "<tr>"):i]
	}
	for _, page := range []string{"/officer/person?id=" + accountingtest.Persons[0], "/officer/recipient?subject=none"} {
		body := accountingtest.Get(f.h, page, "officer").Body.String()
		if page != "/officer/recipient?subject=none" { // the subject none's rows only
			if r := row(body, ds[0].Reference()); strings.Contains(r, "<code>none</code>") || !strings.Contains(r, "(no client)") || !strings.Contains(r, "(no subject)") {
				t.Errorf("GET %s: the row without client or subject reads %q, want (no client) and (no subject), not none", page, r)
			}
		}
		if r := row(body, ds[1].Reference()); strings.Count(r, "<code>none</code>") != 2 || strings.Contains(r, "(no client)") {
			t.Errorf("GET %s: the row of the client named none reads %q, want client and subject none", page, r)
		}
	}
	for _, export := range []string{"/officer/person.csv?id=" + accountingtest.Persons[0], "/officer/recipient.csv?subject=none"} {
		rows, err := csv.NewReader(strings.NewReader(accountingtest.Get(f.h, export, "officer").Body.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		client, subject := slices.Index(rows[0], "client"), slices.Index(rows[0], "subject")
		if rows[1][client] != "none" || rows[1][subject] != "none" ||
			strings.HasPrefix(export, "/officer/person") && (len(rows) != 3 || rows[2][client] != "(no client)" || rows[2][subject] != "(no subject)") {
			t.Errorf("GET %s = %q, want client and subject none, then (no client) and (no subject)", export, rows)
		}
	}
	letter := postLetter(f.h, letterOf(accountingtest.Persons[0], "2026-11-20")).Body.String()
	if !strings.Contains(letter, "(no client named)") || !strings.Contains(letter, "(client none)") {
		t.Errorf("the letter does not tell the disclosure without client from the client none:\n%s", letter)
	}
}

// A search whose every match is hidden (exempt, or a read of the
// accounting) says how many are hidden and why, not that nothing matches.
func TestHiddenDisclosuresAreCounted(t *testing.T) {
	at := func(h int) time.Time { return time.Date(2026, 11, 1, h, 0, 0, 0, time.UTC) }
	ds := []accountingtest.Disclosure{
		{I: 0, At: at(1), Purpose: "TREAT", Op: "getAuthorizedSigners"},
		{I: 1, At: at(2), Purpose: "TREAT", Op: "getAuthorizedSigners"},
		{I: 2, At: at(3), Purpose: "LEGAL", Op: accounting.OperationSearch},
	}
	for i := range ds {
		ds[i].Person, ds[i].Client, ds[i].Subject = accountingtest.Persons[0], "billing-app", "clerk"
	}
	f := newOfficerFixtureOf(t, 10, ds)
	for _, tc := range []struct{ page, want string }{
		{"/officer/person?id=" + accountingtest.Persons[0], "operations: 2"},
		{"/officer/person?id=" + accountingtest.Persons[0], "reads of the accounting itself: 1"},
		{"/officer/person?id=" + accountingtest.Persons[0] + "&exempt=1", "reads of the accounting itself: 1"},
		{"/officer/person?id=" + accountingtest.Persons[0] + "&self=1", "operations: 2"},
		{"/officer/recipient?client=billing-app", "operations: 2"},
		{"/officer/recipient?client=billing-app", "reads of the accounting itself: 1"},
	} {
		body := accountingtest.Get(f.h, tc.page, "officer").Body.String()
		if strings.Contains(body, "No disclosure matches") && requestIDs.MatchString(body) {
			t.Errorf("GET %s: rows and no match", tc.page)
		}
		if !requestIDs.MatchString(body) && (strings.Contains(body, "No disclosure matches") || !strings.Contains(body, tc.want)) {
			t.Errorf("GET %s: want the hidden counted (%q):\n%s", tc.page, tc.want, body)
		}
	}
	if body := accountingtest.Get(f.h, "/officer/person?id="+accountingtest.Persons[1], "officer").Body.String(); !strings.Contains(body, "No disclosure matches this search.") {
		t.Errorf("a person without disclosures: want No disclosure matches:\n%s", body)
	}
}

// A person id in upper case (the API takes one) is taken, as the same
// person's, in lower case, on the pages, the export and the letter.
func TestUpperCasePersonID(t *testing.T) {
	const person = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	upper := strings.ToUpper(person)
	ds := []accountingtest.Disclosure{{I: 0, At: time.Date(2026, 11, 1, 1, 0, 0, 0, time.UTC), Person: person, Client: "billing-app",
		Subject: "clerk", Purpose: "LEGAL", Op: "getAuthorizedSigners"}}
	f := newOfficerFixtureOf(t, 100, ds)
	for _, target := range []string{"/officer/person?id=" + upper, "/officer/person.csv?id=" + upper, "/officer/letter?id=" + upper} {
		rec := accountingtest.Get(f.h, target, "officer")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), person) && !strings.Contains(target, ".csv") {
			t.Errorf("GET %s = %d, want 200 with the id in lower case:\n%s", target, rec.Code, rec.Body)
		}
	}
	if got := pages(t, f, "/officer/person?id="+upper); !slices.Equal(got, []string{"req-00"}) {
		t.Errorf("the page of %s shows %v, want req-00", upper, got)
	}
	if rec := postLetter(f.h, letterOf(upper, "2026-11-20")); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "Reference "+ds[0].Reference()) {
		t.Errorf("POST letter of %s = %d, want the letter of %s:\n%s", upper, rec.Code, ds[0].Reference(), rec.Body)
	}
	for _, a := range f.accesses() {
		if a.Person != person {
			t.Errorf("recorded an access of %q, want %s", a.Person, person)
		}
	}
}

// The CSV marks a read of the accounting as such, not as an accountable
// disclosure.
func TestCSVMarksReadsOfTheAccounting(t *testing.T) {
	f := newOfficerFixture(t, 100)
	for _, export := range []string{"/officer/person.csv?id=" + accountingtest.Persons[0] + "&self=1&exempt=1", "/officer/recipient.csv?client=billing-app&self=1&exempt=1"} {
		rows, err := csv.NewReader(strings.NewReader(accountingtest.Get(f.h, export, "officer").Body.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col, ref := slices.Index(rows[0], "exempt"), slices.Index(rows[0], "caller_request_id")
		byID := map[string]accountingtest.Disclosure{}
		for _, d := range accountingtest.Disclosures() {
			byID[d.RequestID()] = d
		}
		reads := 0
		for _, r := range rows[1:] {
			d := byID[r[ref]]
			want := "accountable"
			switch {
			case d.Op == accounting.OperationSearch:
				want, reads = "read of the accounting", reads+1
			case d.Purpose == "TREAT":
				want = "exempt"
			}
			if r[col] != want {
				t.Errorf("GET %s: %s (%s, %s) is marked %q, want %q", export, r[ref], d.Op, d.Purpose, r[col], want)
			}
		}
		if reads == 0 {
			t.Errorf("GET %s: no read of the accounting in the export", export)
		}
	}
}
