package accounting

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestCodes: the codes of every record, each once; a scan whose context is
// done stops with its error.
func TestCodes(t *testing.T) {
	f := newOfficerFixture(t, 10)
	clients, purposes, err := f.index.Codes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range fixtureClients {
		if !slices.Contains(clients, c) {
			t.Errorf("clients %v lack %s", clients, c)
		}
	}
	for _, p := range fixturePurposes {
		if !slices.Contains(purposes, p) {
			t.Errorf("purposes %v lack %s", purposes, p)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := f.index.Codes(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Codes on a done context: %v, want context.Canceled", err)
	}
}
