package accounting

import (
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestCompareWithStream: an index that followed the stream equals a full
// scan of it; one with a record missing, added, altered or filed under
// another person or time does not, and the difference names the person.
func TestCompareWithStream(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	writeLedger(t, nc, "a", 30)
	writeLedger(t, nc, "b", 20)
	// firstRecord returns the key and record of persons[0]'s oldest record.
	firstRecord := func(t *testing.T, x *Index) ([]byte, ledger.Record) {
		t.Helper()
		var k []byte
		var r ledger.Record
		err := x.db.View(func(txn *badger.Txn) error {
			opts := badger.DefaultIteratorOptions
			opts.Prefix = append(append(append([]byte{}, recordPrefix...), persons[0]...), 0)
			it := txn.NewIterator(opts)
			defer it.Close()
			it.Rewind()
			k = it.Item().KeyCopy(nil)
			var err error
			r, err = x.record(it.Item())
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return k, r
	}
	set := func(t *testing.T, x *Index, k []byte, r ledger.Record) {
		t.Helper()
		if err := x.db.Update(func(txn *badger.Txn) error { return txn.Set(k, appendValue(nil, &r)) }); err != nil {
			t.Fatal(err)
		}
	}
	del := func(t *testing.T, x *Index, k []byte) {
		t.Helper()
		if err := x.db.Update(func(txn *badger.Txn) error { return txn.Delete(k) }); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, x *Index)
		want  string // in the difference; "" for none
	}{
		{"as followed", func(*testing.T, *Index) {}, ""},
		{"a record missing", func(t *testing.T, x *Index) {
			k, _ := firstRecord(t, x)
			del(t, x, k)
		}, "person " + persons[0] + ": a different number of records"},
		{"a record added", func(t *testing.T, x *Index) {
			_, r := firstRecord(t, x)
			r.Index += 1000
			set(t, x, recordKey(r.PersonID, r.Time, 1, r.Index-1), r)
		}, "person " + persons[0] + ": a different number of records"},
		{"a record altered", func(t *testing.T, x *Index) {
			k, r := firstRecord(t, x)
			r.Purpose = "MARKETING"
			set(t, x, k, r)
		}, "person " + persons[0] + ": different records"},
		{"a record under another person", func(t *testing.T, x *Index) {
			k, r := firstRecord(t, x)
			del(t, x, k)
			set(t, x, recordKey(persons[1], r.Time, r.Seq, r.Index-1), r)
		}, "person " + persons[0] + ": a different number of records"},
		{"a record at another place", func(t *testing.T, x *Index) {
			k, r := firstRecord(t, x)
			del(t, x, k)
			_, _, seq, i, _ := parseRecordKey(k)
			set(t, x, recordKey(r.PersonID, r.Time, seq, i+5), r)
		}, "under a key that does not match them"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := openIndex(t)
			follow(t, x, js)
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
	writeLedger(t, nc, "a", 30)
	x := openIndex(t)
	follow(t, x, js)
	pos, err := x.Position()
	if err != nil {
		t.Fatal(err)
	}
	writeLedger(t, nc, "b", 10) // beyond pos (the index follows them too)
	scan, err := ScanDigest(t.Context(), js, ledger.DefaultStream, pos)
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
	all, err := ScanDigest(t.Context(), js, ledger.DefaultStream, 0)
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
	writeLedger(t, nc, "a", 30)
	x := openIndex(t)
	follow(t, x, js)
	scan, err := ScanDigest(t.Context(), js, ledger.DefaultStream, 0)
	if err != nil {
		t.Fatal(err)
	}
	writeLedger(t, nc, "b", 10) // after the scan
	caughtUp(t, x, js)
	recs := searchAll(t, x, Query{Person: persons[0]})
	for _, tc := range []struct {
		name string
		drop int // records left out
		want bool
	}{{"every record", 0, false}, {"one record fewer", 1, true}} {
		t.Run(tc.name, func(t *testing.T) {
			got := NewDigest()
			for _, r := range recs[tc.drop:] {
				if r.Seq > scan.ChainLast(r.Chain) {
					continue // stored after the scan
				}
				if err := got.Add(r.PersonID, &r); err != nil {
					t.Fatal(err)
				}
			}
			if diff := got.DiffPersons(scan, []string{persons[0], persons[0]}); (len(diff) > 0) != tc.want {
				t.Errorf("difference %q, want one: %v", diff, tc.want)
			}
		})
	}
	if scan.ChainLast("a") == 0 || scan.ChainLast("b") != 0 {
		t.Errorf("ChainLast: a %d, b %d; want a > 0, b 0 (written after the scan)", scan.ChainLast("a"), scan.ChainLast("b"))
	}
}
