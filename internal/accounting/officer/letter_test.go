package officer

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/testing/accountingtest"
)

// letterRefs are the references of a letter's entries (the fixture's
// Disclosure.Reference), in order.
var letterRefs = regexp.MustCompile(`Reference (lookupd-0-\d+-1)`)

// summaryLine is the summary of an entry: how many, and the last date.
var summaryLine = regexp.MustCompile(`(\d+) disclosures in all to this recipient for this purpose in the period; the last on ([^.]+)\.`)

// postLetter posts the letter's form as the officer.
func postLetter(h http.Handler, form url.Values) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/officer/letter", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer officer")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// letterOf is the form of a letter for person's request on requested.
func letterOf(person, requested string, extra ...string) url.Values {
	v := url.Values{"id": {person}, "requested": {requested}, "name": {"Ann <b>Example</b>"},
		"address": {"12 Elm Street\r\nSpringfield, IL 62701"}}
	for i := 0; i+1 < len(extra); i += 2 {
		v.Set(extra[i], extra[i+1])
	}
	return v
}

// wantLetter returns the references of person's accountable disclosures
// up to the end of the day until, oldest first.
func wantLetter(person string, until time.Time) []string {
	var out []string
	for _, d := range accountingtest.Disclosures() {
		if d.Person == person && d.Shown(false, false) && d.Time().Before(until.AddDate(0, 0, 1)) {
			out = append(out, d.Reference())
		}
	}
	return out
}

func TestLetterListsEachAccountableDisclosureOnce(t *testing.T) {
	f := newOfficerFixture(t, 4)
	rec := postLetter(f.h, letterOf(accountingtest.Persons[1], "2026-11-02"))
	if rec.Code != http.StatusOK {
		t.Fatalf("POST = %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	var got []string
	for _, m := range letterRefs.FindAllStringSubmatch(body, -1) {
		got = append(got, m[1])
	}
	if w := wantLetter(accountingtest.Persons[1], time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)); !slices.Equal(got, w) || len(w) == 0 {
		t.Errorf("the letter lists %v, want each of %v once, oldest first", got, w)
	}
	for _, s := range []string{
		"Ann &lt;b&gt;Example&lt;/b&gt;<br>12 Elm Street<br>Springfield, IL 62701", // typed, escaped, line by line
		"from <strong>2 November 2020</strong> to <strong>2 November 2026</strong>, the six years before your request",
		"On 2 November 2026 you asked", "20 November 2026", // the request, and the letter's date
		"Example Bank, Customer Onboarding", "1 Bank Plaza, Columbus, OH 43215", // the recipient, from the registry
		"A recipient not in our register", "(client robot)",
		"social security number (last four digits), date of birth",
	} {
		if !strings.Contains(body, s) {
			t.Errorf("the letter lacks %q", s)
		}
	}
	acc := f.accesses()
	if len(acc) != 1 || acc[0].Operation != accounting.OperationProvide || acc[0].Requested != "2026-11-02" || acc[0].Person != accountingtest.Persons[1] ||
		acc[0].Caller.Subject != "officer" || rec.Header().Get("X-Request-Id") != acc[0].RequestID {
		t.Fatalf("recorded %+v, want one provideAccounting of %s for the request of 2026-11-02", acc, accountingtest.Persons[1])
	}
	if s := fmt.Sprintf("%+v", acc); strings.Contains(s, "Ann") || strings.Contains(s, "Elm") {
		t.Errorf("the record %s holds the person's name or address", s)
	}
	if !strings.Contains(body, acc[0].RequestID) {
		t.Error("the letter does not give its own reference (the record's request id)")
	}
}

func TestLetterSummary(t *testing.T) {
	f := newOfficerFixture(t, 4)
	rec := postLetter(f.h, letterOf(accountingtest.Persons[0], "2026-11-20", "summary", "1"))
	if rec.Code != http.StatusOK {
		t.Fatalf("POST = %d %s", rec.Code, rec.Body)
	}
	// The entries: one per client and purpose, the first in full, in
	// the order of their first disclosure.
	type group struct {
		first, last string
		n           int
	}
	groups := map[string]*group{}
	var order []string
	for _, d := range accountingtest.Disclosures() {
		if d.Person != accountingtest.Persons[0] || !d.Shown(false, false) {
			continue
		}
		k := d.Client + "/" + d.Purpose
		if g, ok := groups[k]; ok {
			g.n, g.last = g.n+1, longDate(d.Time())
			continue
		}
		groups[k], order = &group{first: d.Reference(), n: 1}, append(order, k)
	}
	body := rec.Body.String()
	rows := strings.Split(body, "<tr>")[2:] // after the head's
	if len(rows) != len(order) || len(order) < 2 {
		t.Fatalf("%d entries, want %d (one per recipient and purpose)", len(rows), len(order))
	}
	for i, k := range order {
		g := groups[k]
		if !strings.Contains(rows[i], "Reference "+g.first) {
			t.Errorf("entry %d does not give %s (%s) in full", i, g.first, k)
		}
		m := summaryLine.FindStringSubmatch(rows[i])
		switch {
		case g.n == 1 && m != nil:
			t.Errorf("entry %d (%s, once) has a summary %q", i, k, m[0])
		case g.n > 1 && (m == nil || m[1] != fmt.Sprint(g.n) || m[2] != g.last):
			t.Errorf("entry %d (%s): summary %q, want %d disclosures, the last on %s", i, k, m, g.n, g.last)
		}
	}
}

func TestLetterPeriod(t *testing.T) {
	at := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC) }
	ds := []accountingtest.Disclosure{
		{I: 0, At: at(2020, 11, 1)},  // more than six years before the request
		{I: 1, At: at(2020, 11, 3)},  // less
		{I: 2, At: at(2026, 3, 1)},   // in a shorter period asked for
		{I: 3, At: at(2026, 11, 2)},  // the request's day
		{I: 4, At: at(2026, 11, 10)}, // after the request
	}
	for i := range ds {
		ds[i].Person, ds[i].Client, ds[i].Purpose, ds[i].Op = accountingtest.Persons[0], "onboarding", "LEGAL", "getPerson"
	}
	f := newOfficerFixtureOf(t, 10, ds)
	for _, tc := range []struct {
		name string
		form url.Values
		want []string
	}{
		{"six years", letterOf(accountingtest.Persons[0], "2026-11-02"), refsOf(ds[1:4])},
		{"a shorter period", letterOf(accountingtest.Persons[0], "2026-11-02", "from", "2026-01-01"), refsOf(ds[2:4])},
		{"an earlier request", letterOf(accountingtest.Persons[0], "2026-03-01"), refsOf(ds[0:3])},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := postLetter(f.h, tc.form)
			var got []string
			for _, m := range letterRefs.FindAllStringSubmatch(rec.Body.String(), -1) {
				got = append(got, m[1])
			}
			if rec.Code != http.StatusOK || !slices.Equal(got, tc.want) {
				t.Errorf("POST = %d, lists %v, want %v", rec.Code, got, tc.want)
			}
		})
	}
	rec := postLetter(f.h, letterOf(accountingtest.Persons[2], "2026-11-02"))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "We made no disclosure") {
		t.Errorf("a person without disclosures: %d, want a letter that says there were none", rec.Code)
	}
}

func TestLetterBadInput(t *testing.T) {
	f := newOfficerFixture(t, 4)
	form := func(kv ...string) url.Values { return letterOf(accountingtest.Persons[0], "2026-11-02", kv...) }
	without := func(k string) url.Values { v := form(); v.Del(k); return v }
	for _, tc := range []struct {
		name string
		form url.Values
		want string
	}{
		{"malformed person id", form("id", "ABC"), "is not a person id"},
		{"no request date", without("requested"), "The date of the person's request is required."},
		{"malformed request date", form("requested", "02/11/2026"), "is not a date: want YYYY-MM-DD"},
		{"a request date in the future", form("requested", "2026-11-21"), "The request date 2026-11-21 is in the future (today is 2026-11-20)."},
		{"a period of more than six years", form("from", "2020-11-01"), "at most six years before the request: from 2020-11-02 or later"},
		{"a reversed period", form("from", "2026-11-03"), "The date range is reversed"},
		{"no name", without("name"), "The person's name is required"},
		{"no address", form("address", " "), "mailing address is required"},
		{"a name on two lines", form("name", "Ann\nExample"), "one line of at most 200 characters"},
		{"an address too long", form("address", strings.Repeat("line\n", 9)), "at most 8 lines"},
		{"an unknown paper", form("paper", "legal"), `The paper "legal" is not one of letter, a4.`},
		{"an unknown field", form("ssn", "123"), `"ssn" is not a field of the letter's form`},
		{"a summary that is not a checkbox", form("summary", "yes"), `"summary" must be 1 or 0`},
		{"a field twice", func() url.Values { v := form(); v.Add("requested", "2026-11-01"); return v }(), `"requested" is given more than once.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := postLetter(f.h, tc.form)
			if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), htmlText(tc.want)) {
				t.Errorf("POST = %d, want 400 saying %q; body:\n%s", rec.Code, tc.want, rec.Body)
			}
		})
	}
	t.Run("the details in the address", func(t *testing.T) {
		for _, target := range []string{"/officer/letter?id=" + accountingtest.Persons[0] + "&name=Ann", "/officer/letter?id=" + accountingtest.Persons[0] + "&requested=2026-11-02"} {
			if rec := accountingtest.Get(f.h, target, "officer"); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "never in the address") {
				t.Errorf("GET %s = %d, want 400", target, rec.Code)
			}
		}
		req := httptest.NewRequest(http.MethodPost, "/officer/letter?name=Ann", strings.NewReader(form().Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Authorization", "Bearer officer")
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("POST with a query = %d, want 400", rec.Code)
		}
	})
	if acc := f.accesses(); len(acc) != 0 {
		t.Errorf("bad input recorded %+v", acc)
	}
}

// htmlText is s as html/template writes it in text.
func htmlText(s string) string {
	return strings.NewReplacer(`"`, "&#34;", "'", "&#39;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func TestLetterRefusals(t *testing.T) {
	f := newOfficerFixture(t, 4)
	for _, tc := range []struct {
		name, token string
		header      [2]string
		want        int
	}{
		{"no token", "", [2]string{}, http.StatusUnauthorized},
		{"no read:audit", "reader", [2]string{}, http.StatusForbidden},
		{"posted from another site", "officer", [2]string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"posted from another origin", "officer", [2]string{"Origin", "https://evil.example"}, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodPost, "/officer/letter", strings.NewReader(letterOf(accountingtest.Persons[0], "2026-11-02").Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.header[0] != "" {
				req.Header.Set(tc.header[0], tc.header[1])
			}
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, req)
			if rec.Code != tc.want || strings.Contains(rec.Body.String(), "Reference req-") {
				t.Errorf("POST = %d, want %d and no entry", rec.Code, tc.want)
			}
		})
	}
	f.fail = errors.New("the ledger is down")
	rec := postLetter(f.h, letterOf(accountingtest.Persons[0], "2026-11-02"))
	if rec.Code != http.StatusServiceUnavailable || strings.Contains(rec.Body.String(), "Reference req-") {
		t.Errorf("with the ledger down: %d, want 503 and no entry", rec.Code)
	}
	if acc := f.accesses(); len(acc) != 0 {
		t.Errorf("refusals recorded %+v", acc)
	}
	if rec := accountingtest.Get(f.h, "/officer/letter?id="+accountingtest.Persons[0], "officer"); rec.Code != http.StatusOK ||
		!strings.Contains(rec.Body.String(), `method="post"`) || rec.Header().Get("Cache-Control") != "no-store" {
		t.Errorf("the form: %d %v", rec.Code, rec.Header())
	}
}

// refsOf returns the references of ds.
func refsOf(ds []accountingtest.Disclosure) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Reference()
	}
	return out
}
