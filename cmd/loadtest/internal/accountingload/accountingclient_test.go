package accountingload

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestAccountingQueryURI: a query's first page asks for its person, its
// page size and format, and its time bounds.
func TestAccountingQueryURI(t *testing.T) {
	since := time.Date(2025, 4, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name string
		q    AccountingQuery
		want string
	}{
		{"FHIR", AccountingQuery{Person: "p", Count: 100}, "/fhir/AuditEvent?_count=100&entity=p"},
		{"JSON lines", AccountingQuery{Person: "p", JSONL: true}, "/fhir/AuditEvent?_format=jsonl&entity=p"},
		{"a quarter", AccountingQuery{Person: "p", Since: since, Until: since.Add(90 * 24 * time.Hour)},
			"/fhir/AuditEvent?date=ge2025-04-01T00%3A00%3A00Z&date=le2025-06-30T00%3A00%3A00Z&entity=p"},
		{"a client's month", AccountingQuery{Client: "app-3", Since: since, Until: since.Add(29 * 24 * time.Hour)},
			"/officer/recipient?client=app-3&from=2025-04-01&to=2025-04-30"},
		{"a subject", AccountingQuery{Subject: "user-3-1"}, "/officer/recipient?subject=user-3-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.q.URI(); got != tc.want {
				t.Errorf("URI = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestFetchAccountingPage: the records and the next page of either format,
// the token sent, and an error answer as an error.
func TestFetchAccountingPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		switch r.URL.Query().Get("_format") {
		case "html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(`<table><tr><td class="date">1</td></tr><tr><td class="date">2</td></tr></table>` +
				`<a href="/officer/recipient?after=ab&amp;client=app-1" rel="next">Next page</a>`))
		case "jsonl":
			w.Header().Set("Content-Type", "application/jsonl")
			w.Header().Set("Link", `</fhir/AuditEvent?_cursor=ab&_format=jsonl&entity=p>; rel="next"`)
			_, _ = w.Write([]byte("{\"a\":1}\n{\"a\":2}\n"))
		default:
			w.Header().Set("Content-Type", "application/fhir+json")
			_, _ = w.Write([]byte(`{"resourceType":"Bundle","link":[{"relation":"self","url":"/x"},{"relation":"next","url":"/fhir/AuditEvent?_cursor=cd&entity=p"}],` +
				`"entry":[{"resource":{"resourceType":"AuditEvent","id":"a-1-1"}}]}`))
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		name, uri, token string
		records          int
		next, err        string
	}{
		{"JSON lines", "/fhir/AuditEvent?_format=jsonl&entity=p", "tok", 2, "/fhir/AuditEvent?_cursor=ab&_format=jsonl&entity=p", ""},
		{"FHIR", "/fhir/AuditEvent?entity=p", "tok", 1, "/fhir/AuditEvent?_cursor=cd&entity=p", ""},
		{"the officer's HTML", "/officer/recipient?_format=html", "tok", 2, "/officer/recipient?after=ab&client=app-1", ""},
		{"refused", "/fhir/AuditEvent?entity=p", "nope", 0, "", "401"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := FetchAccountingPage(srv.Client(), srv.URL, tc.uri, nil, tc.token)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Records)+p.Rows != tc.records || p.Next != tc.next {
				t.Errorf("%d records and %d rows, next %q; want %d, %q", len(p.Records), p.Rows, p.Next, tc.records, tc.next)
			}
		})
	}
}
