package accounting_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lookup/persons/internal/testing/accountingtest"
)

// TestCodes: the codes of every record, each once; a scan whose context is
// done stops with its error.
func TestCodes(t *testing.T) {
	x := accountingtest.FixtureIndex(t, accountingtest.Disclosures())
	clients, purposes, err := x.Codes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range accountingtest.Clients {
		if !slices.Contains(clients, c) {
			t.Errorf("clients %v lack %s", clients, c)
		}
	}
	for _, p := range accountingtest.Purposes {
		if !slices.Contains(purposes, p) {
			t.Errorf("purposes %v lack %s", purposes, p)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := x.Codes(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Codes on a done context: %v, want context.Canceled", err)
	}
}
