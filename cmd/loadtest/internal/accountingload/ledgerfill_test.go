package accountingload

import (
	"context"
	"testing"

	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/fixtures"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestFillLedgerVerifies: a filled synthetic ledger holds the records
// asked for, on one chain a replica, and passes audit verify; each record
// is of a person of the ledger.
func TestFillLedgerVerifies(t *testing.T) {
	_, js := testkit.StartNATS(t)
	spec := fixtures.LedgerSpec{Version: fixtures.LedgerVersion, Records: 5000, Persons: 300, Replicas: 3, MaxRecords: 40, Seed: 7}
	man, err := FillLedger(context.Background(), js, ledger.DefaultStream, spec, nil)
	if err != nil {
		t.Fatalf("FillLedger: %v", err)
	}
	rep, err := ledger.Verify(context.Background(), js, ledger.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		t.Fatalf("audit verify: %v", rep.Problems)
	}
	if rep.Records != spec.Records || rep.Messages != man.Messages || uint64(man.Messages) != man.LastSeq || len(rep.Chains) != spec.Replicas {
		t.Errorf("verified %d records in %d messages on %d chains; filled %d in %d messages (last sequence %d) on %d",
			rep.Records, rep.Messages, len(rep.Chains), spec.Records, man.Messages, man.LastSeq, spec.Replicas)
	}
	p := fixtures.NewLedgerPersons(spec)
	ids := map[string]bool{}
	for k := range spec.Persons {
		ids[p.ID(k)] = true
	}
	if len(ids) != spec.Persons {
		t.Fatalf("%d distinct person ids, want %d", len(ids), spec.Persons)
	}
	err = ledger.Scan(context.Background(), js, ledger.DefaultStream, 0, func(_ uint64, recs []ledger.Record) error {
		for _, r := range recs {
			if !ids[r.PersonID] {
				t.Fatalf("record of %s, not a person of the ledger", r.PersonID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
