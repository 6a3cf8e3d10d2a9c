package accounting_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestValueRoundTrip: a record stored as a key and a value reads back as
// the same JSON, whatever it holds.
func TestValueRoundTrip(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 891011121, time.UTC)
	full := ledger.Record{Time: at, RequestID: "c0a8e1f2c0a8e1f2c0a8e1f2c0a8e1f2", Subject: "alice", Client: "billing-app",
		Tenants: []string{"b1", "b2"}, Operation: "getAuthorizedSigners", PersonID: accountingtest.Persons[0], SSNMode: "LAST4",
		DOBDisclosed: true, Purpose: "TREAT", Persons: 5, Replica: "lookupd-0", ReadModelSeq: 1 << 40,
		Chain: "lookupd-0", Seq: 300, Index: 256}
	for _, tc := range []struct {
		name string
		r    func(r ledger.Record) ledger.Record
	}{
		{"format 2, every field", func(r ledger.Record) ledger.Record { return r }},
		{"nothing optional", func(r ledger.Record) ledger.Record {
			return ledger.Record{Time: r.Time, RequestID: "r", Operation: "searchAuditEvent", PersonID: r.PersonID, Persons: 1,
				Replica: "a", Chain: "a", Seq: 1, Index: 1}
		}},
		{"format 1: a chain of its own, a predecessor, no index", func(r ledger.Record) ledger.Record {
			r.Chain, r.Seq, r.Index, r.Prev = "proc-1", 7, 0, "9e4b5f0c2f7c1b1d6f2f0c8f7b2f3a9e1d0c4b7a6f5e4d3c2b1a0f9e8d7c6b5a"
			return r
		}},
		{"a time with an offset", func(r ledger.Record) ledger.Record {
			r.Time = r.Time.In(time.FixedZone("", 2*3600))
			return r
		}},
		{"a time before 1970", func(r ledger.Record) ledger.Record {
			r.Time = time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC)
			return r
		}},
		{"an accounting given to the person, with its request date", func(r ledger.Record) ledger.Record {
			r.Operation, r.Requested, r.SSNMode, r.DOBDisclosed = accounting.OperationProvide, "2026-11-20", "", false
			r.Time = r.Time.In(time.FixedZone("", 3600)) // with the time after it
			return r
		}},
		{"strings that need escaping", func(r ledger.Record) ledger.Record {
			r.Subject, r.Purpose = "a\"<b>\u2028", "é"
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// What a follower stores is what the stream holds: a record
			// read back from its JSON.
			b, err := json.Marshal(tc.r(full))
			if err != nil {
				t.Fatal(err)
			}
			var r ledger.Record
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			got, err := accounting.DecodeValue(accounting.AppendValue(nil, &r), r.PersonID, accounting.Nanos(r.Time))
			if err != nil {
				t.Fatalf("decodeValue: %v", err)
			}
			if g, _ := json.Marshal(got); string(g) != string(b) {
				t.Errorf("read back as\n%s\nwant\n%s", g, b)
			}
		})
	}
	if v, j := accounting.AppendValue(nil, &full), mustJSON(t, full); len(v)*2 > len(j) {
		t.Errorf("a value of %d bytes for a record of %d bytes of JSON: want under half", len(v), len(j))
	}
}

// TestValueRefusesDamage: a value cut short, with bytes after it or of
// another format is refused.
func TestValueRefusesDamage(t *testing.T) {
	r := ledger.Record{Time: time.Unix(0, 5).UTC(), RequestID: "r", PersonID: accountingtest.Persons[0], Tenants: []string{"t"}, Persons: 1, Seq: 3, Index: 2}
	v := accounting.AppendValue(nil, &r)
	for _, tc := range []struct {
		name string
		v    []byte
	}{
		{"empty", nil},
		{"cut short", v[:len(v)-1]},
		{"cut in a string", v[:4]},
		{"a byte more", append(append([]byte{}, v...), 0)},
		{"another format", append([]byte{accounting.ValueFormat + 1}, v[1:]...)},
		{"JSON", mustJSON(t, r)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := accounting.DecodeValue(tc.v, r.PersonID, 5); !errors.Is(err, accounting.ErrValue) {
				t.Errorf("decodeValue = %v, want errValue", err)
			}
		})
	}
}

// TestOpenEmptiesAnOlderFormat: an index whose values are of an older
// format (the records' JSON, no format key) is emptied when opened, and
// a follower rebuilds it from the stream; an index of this format is
// kept.
func TestOpenEmptiesAnOlderFormat(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 20)
	dir := t.TempDir()
	x, err := accounting.Open(dir, accounting.Options{})
	if err != nil {
		t.Fatal(err)
	}
	accountingtest.Follow(t, x, js)
	// Make it an index of format 1: no format key, a record as JSON.
	err = accounting.DB(x).Update(func(txn *badger.Txn) error {
		if err := txn.Delete(accounting.FormatKey); err != nil {
			return err
		}
		return txn.Set(accounting.RecordKey(accountingtest.Persons[0], time.Unix(1, 0), 1, 0), mustJSON(t, ledger.Record{PersonID: accountingtest.Persons[0]}))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		wantPos bool
	}{{"older format: emptied", false}, {"this format: kept", true}} {
		t.Run(tc.name, func(t *testing.T) {
			x, err := accounting.Open(dir, accounting.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer x.Close()
			pos, err := x.Position()
			if err != nil || (pos > 0) != tc.wantPos {
				t.Fatalf("position %d (err %v) when opened; want one: %v", pos, err, tc.wantPos)
			}
			if !tc.wantPos {
				accountingtest.Follow(t, x, js)
			}
			if diff, err := x.CompareWithStream(t.Context(), js, ledger.DefaultStream); err != nil || len(diff) > 0 {
				t.Errorf("the index differs from the stream (err %v): %v", err, diff)
			}
		})
	}
}

// mustJSON returns the JSON of v.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
