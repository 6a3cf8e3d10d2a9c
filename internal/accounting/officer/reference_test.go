package officer

import (
	"encoding/csv"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/accountingtest"
)

// A caller chooses its X-Request-Id: two clients may send the same one,
// or words meant for the person. The references the letter, the pages and
// the exports give are the service's own (where the ledger stores the
// record); the officer's pages and exports show the caller's request id
// beside them only as the caller's, and the letter not at all.
func TestReferencesAreOurs(t *testing.T) {
	const chosen = "CALL-555-0100-TO-CLAIM-YOUR-REFUND"
	at := func(h int) time.Time { return time.Date(2026, 11, 1, h, 0, 0, 0, time.UTC) }
	ds := []accountingtest.Disclosure{
		{I: 0, At: at(1), Client: "onboarding", Request: chosen},
		{I: 1, At: at(2), Client: "billing-app", Request: chosen}, // another client, the same id
	}
	for i := range ds {
		ds[i].Person, ds[i].Purpose, ds[i].Op, ds[i].Subject = accountingtest.Persons[0], "LEGAL", "getAuthorizedSigners", "clerk"
	}
	f := newOfficerFixtureOf(t, 10, ds)
	refs := []string{ds[0].Reference(), ds[1].Reference()}

	letter := postLetter(f.h, letterOf(accountingtest.Persons[0], "2026-11-20")).Body.String()
	var got []string
	for _, m := range regexp.MustCompile(`Reference ([^<\s]+)`).FindAllStringSubmatch(letter, -1) {
		got = append(got, m[1])
	}
	if !slices.Equal(got, refs) {
		t.Errorf("the letter's references are %q, want the service's %q", got, refs)
	}
	if strings.Contains(letter, chosen) {
		t.Errorf("the letter prints the caller's request id, which the caller chose:\n%s", letter)
	}

	for _, page := range []string{"/officer/person?id=" + accountingtest.Persons[0], "/officer/recipient?client=onboarding"} {
		body := accountingtest.Get(f.h, page, "officer").Body.String()
		if !strings.Contains(body, `<th scope="col">Reference</th>`) || !strings.Contains(body, "<code>"+refs[0]+"</code>") {
			t.Errorf("GET %s: no Reference column with the service's reference %s", page, refs[0])
		}
		if strings.Count(body, chosen) != strings.Count(body, `caller's request id <code>`+chosen+`</code>`) || !strings.Contains(body, chosen) {
			t.Errorf("GET %s: the caller's request id is not marked as the caller's:\n%s", page, body)
		}
	}
	for _, export := range []string{"/officer/person.csv?id=" + accountingtest.Persons[0], "/officer/recipient.csv?client=onboarding"} {
		rec := accountingtest.Get(f.h, export, "officer")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", export, rec.Code)
		}
		rows, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		ref, caller := slices.Index(rows[0], "reference"), slices.Index(rows[0], "caller_request_id")
		if ref < 0 || caller < 0 || slices.Contains(rows[0], "request_id") {
			t.Fatalf("GET %s: header %q, want reference and caller_request_id (no bare request_id)", export, rows[0])
		}
		if rows[1][ref] != refs[len(rows)-2] || rows[1][caller] != chosen {
			t.Errorf("GET %s: first row %q, want the reference %s and the caller's %s", export, rows[1], refs[len(rows)-2], chosen)
		}
	}
}
