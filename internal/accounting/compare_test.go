package accounting_test

import (
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestCompareWithStream: an index that followed the stream equals a full
// scan of it; one with a record missing, added, altered or filed under
// another person or time does not, and the difference names the person.
func TestCompareWithStream(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 30)
	accountingtest.WriteLedger(t, nc, "b", 20)
	// firstRecord returns the key and record of persons[0]'s oldest record.
	firstRecord := func(t *testing.T, x *accounting.Index) ([]byte, ledger.Record) {
		t.Helper()
		var k []byte
		var r ledger.Record
		err := accounting.DB(x).View(func(txn *badger.Txn) error {
			opts := badger.DefaultIteratorOptions
			opts.Prefix = append(append(append([]byte{}, accounting.RecordPrefix...), accountingtest.Persons[0]...), 0)
			it := txn.NewIterator(opts)
			defer it.Close()
			it.Rewind()
			k = it.Item().KeyCopy(nil)
			var err error
			r, err = accounting.ReadRecord(x, it.Item())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return k, r
	}
	set := func(t *testing.T, x *accounting.Index, k []byte, r ledger.Record) {
		t.Helper()
		if err := accounting.DB(x).Update(func(txn *badger.Txn) error { return txn.Set(k, accounting.AppendValue(nil, &r)) }); err != nil {
			t.Fatal(err)
		}
	}
	del := func(t *testing.T, x *accounting.Index, k []byte) {
		t.Helper()
		if err := accounting.DB(x).Update(func(txn *badger.Txn) error { return txn.Delete(k) }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, x *accounting.Index)
		want  string // in the difference; "" for none
	}{
		{"as followed", func(*testing.T, *accounting.Index) {}, ""},
		{"a record missing", func(t *testing.T, x *accounting.Index) {
			k, _ := firstRecord(t, x)
			del(t, x, k)
		}, "person " + accountingtest.Persons[0] + ": a different number of records"},
		{"a record added", func(t *testing.T, x *accounting.Index) {
			_, r := firstRecord(t, x)
			r.Index += 1000
			set(t, x, accounting.RecordKey(r.PersonID, r.Time, 1, r.Index-1), r)
		}, "person " + accountingtest.Persons[0] + ": a different number of records"},
		{"a record altered", func(t *testing.T, x *accounting.Index) {
			k, r := firstRecord(t, x)
			r.Purpose = "MARKETING"
			set(t, x, k, r)
		}, "person " + accountingtest.Persons[0] + ": different records"},
		{"a record under another person", func(t *testing.T, x *accounting.Index) {
			k, r := firstRecord(t, x)
			del(t, x, k)
			set(t, x, accounting.RecordKey(accountingtest.Persons[1], r.Time, r.Seq, r.Index-1), r)
		}, "person " + accountingtest.Persons[0] + ": a different number of records"},
		{"a record at another place", func(t *testing.T, x *accounting.Index) {
			k, r := firstRecord(t, x)
			del(t, x, k)
			_, _, seq, i, _ := accounting.ParseRecordKey(k)
			set(t, x, accounting.RecordKey(r.PersonID, r.Time, seq, i+5), r)
		}, "under a key that does not match them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := accountingtest.OpenIndex(t)
			accountingtest.Follow(t, x, js)
			tc.plant(t, x)
			diff, err := x.CompareWithStream(t.Context(), js, ledger.DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(diff, "\n")
			switch {
			case tc.want == "" && got != "":
				t.Errorf("the index differs from the stream:\n%s", got)
			case tc.want != "" && !strings.Contains(got, tc.want):
				t.Errorf("difference = %q, want it to say %q", got, tc.want)
			}
		})
	}
}

// TestDigestsCountEveryRecord: the index's digest and the stream's count
// the same records and persons, and the bound leaves later messages out.
func TestDigestsCountEveryRecord(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 30)
	x := accountingtest.OpenIndex(t)
	accountingtest.Follow(t, x, js)
	pos, err := x.Position()
	if err != nil {
		t.Fatal(err)
	}
	accountingtest.WriteLedger(t, nc, "b", 10) // beyond pos (the index follows them too)
	scan, err := accounting.ScanDigest(t.Context(), js, ledger.DefaultStream, pos)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := x.Digest(pos)
	if err != nil {
		t.Fatal(err)
	}
	// 30 answers of 1, 2 and 3 persons in turn: 60 records of 3 persons.
	if scan.Records != 60 || idx.Records != 60 || scan.Persons() != 3 || idx.Persons() != 3 {
		t.Errorf("records (persons): stream up to %d %d (%d), index %d (%d); want 60 (3)",
			pos, scan.Records, scan.Persons(), idx.Records, idx.Persons())
	}
	all, err := accounting.ScanDigest(t.Context(), js, ledger.DefaultStream, 0)
	if err != nil {
		t.Fatal(err)
	}
	if all.Records != 60+19 {
		t.Errorf("the whole stream: %d records, want 79", all.Records)
	}
}

// TestDiffPersons: a person's records read through Search equal the
// stream's, one record fewer does not; records stored after the scan are
// told apart by ChainLast.
func TestDiffPersons(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 30)
	x := accountingtest.OpenIndex(t)
	accountingtest.Follow(t, x, js)
	scan, err := accounting.ScanDigest(t.Context(), js, ledger.DefaultStream, 0)
	if err != nil {
		t.Fatal(err)
	}
	accountingtest.WriteLedger(t, nc, "b", 10) // after the scan
	accountingtest.CaughtUp(t, x, js)
	recs := accountingtest.SearchAll(t, x, accounting.Query{Person: accountingtest.Persons[0]})
	for _, tc := range []struct {
		name string
		drop int // records left out
		want bool
	}{{"every record", 0, false}, {"one record fewer", 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			got := accounting.NewDigest()
			for _, r := range recs[tc.drop:] {
				if r.Seq > scan.ChainLast(r.Chain) {
					continue // stored after the scan
				}
				if err := got.Add(r.PersonID, &r); err != nil {
					t.Fatal(err)
				}
			}
			if diff := got.DiffPersons(scan, []string{accountingtest.Persons[0], accountingtest.Persons[0]}); (len(diff) > 0) != tc.want {
				t.Errorf("difference %q, want one: %v", diff, tc.want)
			}
		})
	}
	if scan.ChainLast("a") == 0 || scan.ChainLast("b") != 0 {
		t.Errorf("ChainLast: a %d, b %d; want a > 0, b 0 (written after the scan)", scan.ChainLast("a"), scan.ChainLast("b"))
	}
}
