package loadtest

import (
	"context"
	"testing"

	"github.com/lookup/persons/internal/audit"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestFillLedgerVerifies: a filled synthetic ledger holds the records
// asked for, on one chain a replica, and passes audit verify; each record
// is of a person of the ledger.
func TestFillLedgerVerifies(t *testing.T) {
	_, js := testkit.StartNATS(t)
	spec := LedgerSpec{Version: LedgerVersion, Records: 5000, Persons: 300, Replicas: 3, MaxRecords: 40, Seed: 7}
	man, err := FillLedger(context.Background(), js, audit.DefaultStream, spec, nil)
	if err != nil {
		t.Fatalf("FillLedger: %v", err)
	}
	rep, err := audit.Verify(context.Background(), js, audit.DefaultStream)
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
	p := NewLedgerPersons(spec)
	ids := map[string]bool{}
	for k := range spec.Persons {
		ids[p.ID(k)] = true
	}
	if len(ids) != spec.Persons {
		t.Fatalf("%d distinct person ids, want %d", len(ids), spec.Persons)
	}
	err = audit.Scan(context.Background(), js, audit.DefaultStream, 0, func(_ uint64, recs []audit.Record) error {
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

// TestLedgerIsReproducible: a spec writes the same messages every time.
func TestLedgerIsReproducible(t *testing.T) {
	spec := LedgerSpec{Version: LedgerVersion, Records: 2000, Persons: 100, Replicas: 2, MaxRecords: 30, Seed: 3}
	a, b := NewLedger(spec), NewLedger(spec)
	for i := 0; ; i++ {
		sa, da, _, oka, erra := a.Next()
		sb, db, _, okb, errb := b.Next()
		if erra != nil || errb != nil {
			t.Fatal(erra, errb)
		}
		if oka != okb || sa != sb || string(da) != string(db) {
			t.Fatalf("message %d differs between two writers of one spec", i)
		}
		if !oka {
			return
		}
	}
}

// TestLedgerPersonsDraw: the skewed draw favours a few persons, the
// uniform one does not.
func TestLedgerPersonsDraw(t *testing.T) {
	p := NewLedgerPersons(LedgerSpec{Persons: 100000, Seed: 1})
	for _, tc := range []struct {
		dist       string
		minTopFreq int // draws of the most drawn person, at least
		maxTopFreq int
	}{
		{Uniform, 1, 10},
		{Zipf, 11, 1000},
	} {
		t.Run(tc.dist, func(t *testing.T) {
			ids, err := p.Draw(tc.dist, 50000, 9)
			if err != nil {
				t.Fatal(err)
			}
			n := map[string]int{}
			top := 0
			for _, id := range ids {
				n[id]++
				top = max(top, n[id])
			}
			if top < tc.minTopFreq || top > tc.maxTopFreq {
				t.Errorf("the most drawn person drawn %d times of %d, want %d to %d", top, len(ids), tc.minTopFreq, tc.maxTopFreq)
			}
		})
	}
	if _, err := p.Draw("normal", 1, 1); err == nil {
		t.Error(`Draw("normal") did not fail`)
	}
}
