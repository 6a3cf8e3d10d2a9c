package fhir_test

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting/fhir"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/testing/accountingtest"
)

func TestClientFetchesEveryPage(t *testing.T) {
	h, x, _ := searchServer(t, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	all := accountingtest.SearchAll(t, x, accounting.Query{Person: accountingtest.Persons[1]})
	since, until := all[len(all)-3].Time, all[2].Time // all but the two oldest; all but the two newest
	for _, tc := range []struct {
		name         string
		person       string
		since, until time.Time
		want         int
	}{
		{"all", accountingtest.Persons[1], time.Time{}, time.Time{}, len(all)},
		{"bounded", accountingtest.Persons[1], since, until, len(all) - 4},
		{"nobody", "44444444-4444-4444-8444-444444444444", time.Time{}, time.Time{}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := fhir.Client{BaseURL: srv.URL + "/", Token: "auditor", PageSize: 3}
			got, err := c.Fetch(t.Context(), tc.person, tc.since, tc.until)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.want {
				t.Fatalf("Fetch = %d records, want %d", len(got), tc.want)
			}
			if tc.want == len(all) && fmt.Sprint(accountingtest.IDs(got)) != fmt.Sprint(accountingtest.IDs(all)) {
				t.Errorf("Fetch = %v\nwant    %v", accountingtest.IDs(got), accountingtest.IDs(all))
			}
		})
	}
}

func TestClientErrors(t *testing.T) {
	h, _, _ := searchServer(t, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, token string
		want        string
	}{
		{"no scope", "reader", "403 Forbidden: the token does not allow"},
		{"bad token", "x", "401 Unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fhir.Client{BaseURL: srv.URL, Token: tc.token}.Fetch(t.Context(), accountingtest.Persons[0], time.Time{}, time.Time{})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), accountingtest.Persons[0]) {
				t.Errorf("Fetch = %v, want an error with %q, without the query", err, tc.want)
			}
		})
	}
}
