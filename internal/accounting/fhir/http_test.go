package fhir_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/accounting/fhir"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// searchServer returns the search of an index of a ledger's 30 answers,
// with the searches it recorded.
func searchServer(t *testing.T, recordErr error) (http.Handler, *accounting.Index, *[]string) {
	t.Helper()
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 30)
	x := accountingtest.OpenIndex(t)
	accountingtest.Follow(t, x, js)
	var recorded []string
	h := fhir.NewHandler(fhir.HandlerConfig{Index: x,
		Authorize: accountingtest.Authorize,
		Record: func(_ context.Context, a accounting.Access) error {
			recorded = append(recorded, a.Caller.Subject+" "+a.Person)
			return recordErr
		}})
	return h, x, &recorded
}

func TestSearchErrors(t *testing.T) {
	h, _, recorded := searchServer(t, nil)
	for _, tc := range []struct {
		name, target, token string
		want                int
	}{
		{"no token", "/fhir/AuditEvent?entity=" + accountingtest.Persons[0], "", http.StatusUnauthorized},
		{"no scope", "/fhir/AuditEvent?entity=" + accountingtest.Persons[0], "reader", http.StatusForbidden},
		{"no entity", "/fhir/AuditEvent", "auditor", http.StatusBadRequest},
		{"bad entity", "/fhir/AuditEvent?entity=x", "auditor", http.StatusBadRequest},
		{"unknown parameter", "/fhir/AuditEvent?entity=" + accountingtest.Persons[0] + "&patient=x", "auditor", http.StatusBadRequest},
		{"bad date", "/fhir/AuditEvent?entity=" + accountingtest.Persons[0] + "&date=yesterday", "auditor", http.StatusBadRequest},
		{"bad count", "/fhir/AuditEvent?entity=" + accountingtest.Persons[0] + "&_count=0", "auditor", http.StatusBadRequest},
		{"bad cursor", "/fhir/AuditEvent?entity=" + accountingtest.Persons[0] + "&_cursor=zz", "auditor", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := accountingtest.Get(h, tc.target, tc.token)
			if rec.Code != tc.want || !strings.Contains(rec.Body.String(), `"OperationOutcome"`) {
				t.Errorf("GET %s = %d %s, want %d and an OperationOutcome", tc.target, rec.Code, rec.Body, tc.want)
			}
		})
	}
	if len(*recorded) != 0 {
		t.Errorf("refused searches recorded: %q", *recorded)
	}
}

func TestSearchPagesThroughAPersonsDisclosures(t *testing.T) {
	h, x, recorded := searchServer(t, nil)
	want := accountingtest.IDs(accountingtest.SearchAll(t, x, accounting.Query{Person: accountingtest.Persons[2]}))
	var got []ledger.Record
	target := "/fhir/AuditEvent?entity=Patient/" + accountingtest.Persons[2] + "&_count=4"
	for pages := 0; target != ""; pages++ {
		rec := accountingtest.Get(h, target, "auditor")
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %s", target, rec.Code, rec.Body)
		}
		var b fhir.Bundle
		if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil || b.Type != "searchset" || len(b.Entry) > 4 {
			t.Fatalf("page %d: %v %s", pages, err, rec.Body)
		}
		target = ""
		for _, l := range b.Link {
			if l.Relation == "next" {
				target = l.URL
			}
		}
		for _, e := range b.Entry {
			got = append(got, ledger.Record{PersonID: strings.TrimPrefix(e.Resource.Entity[0].What.Reference, "Patient/")})
		}
		if pages > 100 {
			t.Fatal("no last page")
		}
	}
	if len(got) != len(want) || len(got) == 0 {
		t.Errorf("pages held %d AuditEvents, the index %d", len(got), len(want))
	}
	if len(*recorded) == 0 || (*recorded)[0] != "auditor "+accountingtest.Persons[2] {
		t.Errorf("searches recorded: %q, want each by auditor of %s", *recorded, accountingtest.Persons[2])
	}
}

func TestSearchJSONLines(t *testing.T) {
	h, x, _ := searchServer(t, nil)
	rec := accountingtest.Get(h, "/fhir/AuditEvent?entity="+accountingtest.Persons[0]+"&_format=jsonl&_count=3", "auditor")
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	if rec.Code != http.StatusOK || len(lines) != 3 || !strings.Contains(rec.Header().Get("Link"), `rel="next"`) {
		t.Fatalf("GET jsonl = %d, %d lines, Link %q", rec.Code, len(lines), rec.Header().Get("Link"))
	}
	first, _, _ := x.Search(accounting.Query{Person: accountingtest.Persons[0], Limit: 1})
	var r ledger.Record
	if err := json.Unmarshal([]byte(lines[0]), &r); err != nil || r.RequestID != first[0].RequestID {
		t.Errorf("first line %q (%v), want the newest record %s", lines[0], err, first[0].RequestID)
	}
}

func TestSearchNotRecordedDisclosesNothing(t *testing.T) {
	h, _, _ := searchServer(t, errors.New("ledger down"))
	rec := accountingtest.Get(h, "/fhir/AuditEvent?entity="+accountingtest.Persons[0], "auditor")
	if rec.Code != http.StatusServiceUnavailable || strings.Contains(rec.Body.String(), accountingtest.Persons[0]) {
		t.Errorf("search not recorded = %d %s, want 503 without the person's records", rec.Code, rec.Body)
	}
}

func TestSearchPurpose(t *testing.T) {
	h, _, _ := searchServer(t, nil)
	for _, tc := range []struct {
		name    string
		purpose []string
		want    int
	}{
		{"none", nil, http.StatusOK},
		{"given", []string{"HACCOUNT"}, http.StatusOK},
		{"twice", []string{"A", "B"}, http.StatusBadRequest},
		{"space", []string{"fraud review"}, http.StatusBadRequest},
		{"too long", []string{strings.Repeat("x", 65)}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/fhir/AuditEvent?entity="+accountingtest.Persons[0], nil)
			req.Header.Set("Authorization", "Bearer auditor")
			for _, p := range tc.purpose {
				req.Header.Add("Lookup-Purpose", p)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Errorf("GET with Lookup-Purpose %q = %d %s, want %d", tc.purpose, rec.Code, rec.Body, tc.want)
			}
			if tc.want == http.StatusOK && len(rec.Header().Get("X-Request-Id")) != 32 {
				t.Errorf("X-Request-Id = %q, want the search's request id", rec.Header().Get("X-Request-Id"))
			}
		})
	}
}

// Every answer of the search, the Bundle, the JSON lines and each
// OperationOutcome, is not to be cached nor sniffed, as the API's and the
// officer's pages are not.
func TestSearchHeaders(t *testing.T) {
	h, _, _ := searchServer(t, nil)
	for _, tc := range []struct{ target, token string }{
		{"/fhir/AuditEvent?entity=" + accountingtest.Persons[0], "auditor"},
		{"/fhir/AuditEvent?entity=" + accountingtest.Persons[0] + "&_format=jsonl", "auditor"},
		{"/fhir/AuditEvent?entity=x", "auditor"},
		{"/fhir/AuditEvent?entity=" + accountingtest.Persons[0], ""},
		{"/fhir/AuditEvent?entity=" + accountingtest.Persons[0], "reader"},
		{"/fhir/Patient", "auditor"},
	} {
		rec := accountingtest.Get(h, tc.target, tc.token)
		if h := rec.Header(); h.Get("Cache-Control") != "no-store" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s (token %q) = %d with Cache-Control %q, X-Content-Type-Options %q; want no-store and nosniff",
				tc.target, tc.token, rec.Code, h.Get("Cache-Control"), h.Get("X-Content-Type-Options"))
		}
	}
}

// An entity in upper case (the API takes one) is the same person's.
func TestSearchUpperCaseEntity(t *testing.T) {
	const person = "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	x := accountingtest.FixtureIndex(t, []accountingtest.Disclosure{{Person: person, Client: "billing-app", Purpose: "LEGAL", Op: "getAuthorizedSigners"}})
	var recorded []string
	h := fhir.NewHandler(fhir.HandlerConfig{Index: x, Authorize: accountingtest.Authorize,
		Record: func(_ context.Context, a accounting.Access) error {
			recorded = append(recorded, a.Caller.Subject+" "+a.Person)
			return nil
		}})
	for _, entity := range []string{strings.ToUpper(person), "Patient/" + strings.ToUpper(person)} {
		rec := accountingtest.Get(h, "/fhir/AuditEvent?entity="+entity+"&_format=jsonl", "auditor")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), person) {
			t.Errorf("GET entity=%s = %d %s, want the person's records", entity, rec.Code, rec.Body)
		}
	}
	if len(recorded) != 2 {
		t.Errorf("recorded %q, want both searches", recorded)
	}
	for _, r := range recorded {
		if r != "auditor "+person {
			t.Errorf("recorded %q, want the person id in lower case", r)
		}
	}
}
