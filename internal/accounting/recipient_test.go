package accounting_test

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/fixtures"
	"github.com/lookup/persons/internal/testing/testkit"
)

// stored is a record of a synthetic ledger and where the stream holds it.
type stored struct {
	r   ledger.Record
	seq uint64 // the message's stream sequence
	i   int    // its place in the message
}

// id says which record s is.
func (s stored) id() string { return recID(&s.r) }

// recID says which record r is: where its chain holds it, its request
// and person.
func recID(r *ledger.Record) string {
	return fmt.Sprintf("%s/%d/%d %s %s", r.Chain, r.Seq, r.Index, r.RequestID, r.PersonID)
}

// recipientMessages returns the messages of a synthetic ledger of n
// records (fixtures' ledger: 20 clients, 500 subjects), one record in
// seven without a client, one in eleven without a subject and one in
// thirteen with a client holding a 0 byte (none of which the index keys
// by client or subject), and its records.
func recipientMessages(t *testing.T, n int) ([]accounting.Message, []stored) {
	t.Helper()
	l := fixtures.NewLedger(fixtures.LedgerSpec{Version: fixtures.LedgerVersion, Records: n, Persons: n / 10, Replicas: 3, MaxRecords: 40, Seed: 7})
	var msgs []accounting.Message
	var all []stored
	for k := 0; ; {
		subject, data, _, ok, err := l.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return msgs, all
		}
		var m ledger.Message
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		seq := uint64(len(msgs) + 1)
		for i := range m.Records {
			r := &m.Records[i]
			switch k++; {
			case k%7 == 0:
				r.Client = ""
			case k%11 == 0:
				r.Subject = ""
			case k%13 == 0:
				r.Client = "app-\x00" + r.Client
			}
		}
		data = mustJSON(t, m)
		recs, err := ledger.RecordsOf(subject, data)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range recs {
			all = append(all, stored{r: r, seq: seq, i: i})
		}
		msgs = append(msgs, accounting.Message{StreamSeq: seq, Subject: subject, Data: data})
	}
}

// applied returns a new index within opts with msgs applied, perApply
// messages at a time.
func applied(t *testing.T, opts accounting.Options, msgs []accounting.Message, perApply int) *accounting.Index {
	t.Helper()
	x, err := accounting.Open(t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	for i := 0; i < len(msgs); i += perApply {
		if err := x.Apply(msgs[i:min(i+perApply, len(msgs))]); err != nil {
			t.Fatal(err)
		}
	}
	return x
}

// newestFirst returns the ids of the records of all keep keeps, in the
// order of a search: newest first, then by stream sequence and place.
func newestFirst(all []stored, keep func(*ledger.Record) bool) []string {
	var out []stored
	for _, s := range all {
		if keep(&s.r) {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b stored) int {
		return cmp.Or(cmp.Compare(accounting.Nanos(b.r.Time), accounting.Nanos(a.r.Time)), cmp.Compare(b.seq, a.seq), cmp.Compare(b.i, a.i))
	})
	ids := make([]string, len(out))
	for i, s := range out {
		ids[i] = s.id()
	}
	return ids
}

// searchRecipientAll returns the ids of every record of q, page after
// page, checking each page's size.
func searchRecipientAll(t *testing.T, x *accounting.Index, q accounting.RecipientQuery, keep func(*ledger.Record) bool) []string {
	t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		recs, next, err := x.SearchRecipient(q, keep)
		if err != nil {
			t.Fatalf("SearchRecipient(%+v): %v", q, err)
		}
		if len(recs) > q.Limit {
			t.Fatalf("a page of %d records, limit %d", len(recs), q.Limit)
		}
		for i := range recs {
			ids = append(ids, recID(&recs[i]))
		}
		if next == "" {
			return ids
		}
		if pages > 10000 {
			t.Fatal("no last page")
		}
		q.After = next
	}
}

func TestSearchRecipient(t *testing.T) {
	msgs, all := recipientMessages(t, 3000)
	x := applied(t, accounting.Options{}, msgs, 16)
	client, subject := all[100].r.Client, all[100].r.Subject
	var times []time.Time
	for _, s := range all {
		if s.r.Client == client {
			times = append(times, s.r.Time)
		}
	}
	since, until := times[len(times)/4], times[3*len(times)/4]
	for _, tc := range []struct {
		name string
		q    accounting.RecipientQuery
		keep func(*ledger.Record) bool // the search's own filter (nil: none)
		want func(*ledger.Record) bool
	}{
		{"client", accounting.RecipientQuery{Client: client}, nil, func(r *ledger.Record) bool { return r.Client == client }},
		{"subject", accounting.RecipientQuery{Subject: subject}, nil, func(r *ledger.Record) bool { return r.Subject == subject }},
		{"client and subject", accounting.RecipientQuery{Client: client, Subject: subject}, nil,
			func(r *ledger.Record) bool { return r.Client == client && r.Subject == subject }},
		{"dates", accounting.RecipientQuery{Client: client, Since: since, Until: until}, nil, func(r *ledger.Record) bool {
			return r.Client == client && !r.Time.Before(since) && !r.Time.After(until)
		}},
		{"since only", accounting.RecipientQuery{Subject: subject, Since: since}, nil,
			func(r *ledger.Record) bool { return r.Subject == subject && !r.Time.Before(since) }},
		{"kept by the caller", accounting.RecipientQuery{Client: client}, func(r *ledger.Record) bool { return r.Purpose == "TREAT" },
			func(r *ledger.Record) bool { return r.Client == client && r.Purpose == "TREAT" }},
		{"a client without records", accounting.RecipientQuery{Client: "app-99"}, nil, func(*ledger.Record) bool { return false }},
		{"a client that is another's prefix", accounting.RecipientQuery{Client: "app-1"}, nil, func(r *ledger.Record) bool { return r.Client == "app-1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, limit := range []int{7, 1000} {
				tc.q.Limit = limit
				got, want := searchRecipientAll(t, x, tc.q, tc.keep), newestFirst(all, tc.want)
				if !slices.Equal(got, want) {
					t.Fatalf("limit %d: %d records\n%v\nwant %d\n%v", limit, len(got), got, len(want), want)
				}
				if len(want) == 0 && tc.name != "a client without records" {
					t.Fatal("the case finds nothing: it tests nothing")
				}
			}
		})
	}
}

func TestSearchRecipientRefuses(t *testing.T) {
	msgs, _ := recipientMessages(t, 200)
	x := applied(t, accounting.Options{}, msgs, 16)
	for _, tc := range []struct {
		name string
		q    accounting.RecipientQuery
		want error
	}{
		{"no recipient", accounting.RecipientQuery{Since: time.Unix(1, 0)}, accounting.ErrNoRecipient},
		{"a client with a 0 byte", accounting.RecipientQuery{Client: "app-\x000"}, accounting.ErrNoRecipient},
		{"a subject with a 0 byte", accounting.RecipientQuery{Client: "app-1", Subject: "user-\x00"}, accounting.ErrNoRecipient},
		{"a cursor not hex", accounting.RecipientQuery{Client: "app-1", After: "zz"}, accounting.ErrBadCursor},
		{"a cursor too short", accounting.RecipientQuery{Subject: "user-1", After: "00ff"}, accounting.ErrBadCursor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, _, err := x.SearchRecipient(tc.q, nil); !errors.Is(err, tc.want) {
				t.Errorf("SearchRecipient(%+v) = %v, want %v", tc.q, err, tc.want)
			}
		})
	}
}

// TestRecipientKeysCommittedWithTheirRecord: each record with a client
// or subject has its keys by them, committed in the record's transaction
// (the same version), even when the transactions fill up (a small
// memory budget: Apply commits many times); no other key by recipient
// is there.
func TestRecipientKeysCommittedWithTheirRecord(t *testing.T) {
	msgs, all := recipientMessages(t, 6000)
	x := applied(t, accounting.Options{MemoryBudget: accounting.MinMemoryBudget}, msgs, 1000)
	wantKeys := 0
	err := accounting.DB(x).View(func(txn *badger.Txn) error {
		for _, s := range all {
			rk := accounting.RecordKey(s.r.PersonID, s.r.Time, s.seq, s.i)
			rec, err := txn.Get(rk)
			if err != nil {
				return fmt.Errorf("record %s: %w", s.id(), err)
			}
			for _, by := range []struct {
				prefix []byte
				s      string
			}{{accounting.ClientPrefix, s.r.Client}, {accounting.SubjectPrefix, s.r.Subject}} {
				if !accounting.Indexable(by.s) {
					continue
				}
				wantKeys++
				k := append(append(append([]byte{}, by.prefix...), by.s...), 0)
				k = append(k, rk[len(rk)-20:]...)
				item, err := txn.Get(k)
				if err != nil {
					return fmt.Errorf("record %s by %q: %w", s.id(), by.s, err)
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if string(v) != s.r.PersonID || item.Version() != rec.Version() {
					return fmt.Errorf("record %s (version %d) by %q: value %q, version %d", s.id(), rec.Version(), by.s, v, item.Version())
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := countKeys(t, x, accounting.ClientPrefix) + countKeys(t, x, accounting.SubjectPrefix); got != wantKeys {
		t.Errorf("%d keys by client or subject, want %d", got, wantKeys)
	}
	if v := versions(t, x); v < 3 {
		t.Errorf("the records were committed in %d transactions: the test did not fill one", v)
	}
}

// countKeys returns the number of keys under prefix.
func countKeys(t *testing.T, x *accounting.Index, prefix []byte) int {
	t.Helper()
	n := 0
	err := accounting.DB(x).View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix, opts.PrefetchValues = prefix, false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// versions returns the number of versions (commits) the records have.
func versions(t *testing.T, x *accounting.Index) int {
	t.Helper()
	seen := map[uint64]bool{}
	err := accounting.DB(x).View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix, opts.PrefetchValues = accounting.RecordPrefix, false
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			seen[it.Item().Version()] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(seen)
}

// TestOpenEmptiesAFormat2Index: an index of format 2 (records without
// keys by client and subject) is emptied when opened, and a follower
// rebuilds it from the stream, keys by recipient included.
func TestOpenEmptiesAFormat2Index(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 20) // records without a client or subject
	l, err := ledger.New(nc, ledger.Config{Replica: "b"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		d := events.Disclosure{RequestID: fmt.Sprintf("b-%d", i), Subject: fmt.Sprintf("clerk-%d", i%4), Client: accountingtest.Clients[i%3],
			Operation: "getAuthorizedSigners", Persons: []events.DisclosedPerson{{ID: accountingtest.Persons[i%3], SSNMode: "LAST4"}, {ID: accountingtest.Persons[(i+1)%3]}}}
		if err := l.Disclose(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	x, err := accounting.Open(dir, accounting.Options{})
	if err != nil {
		t.Fatal(err)
	}
	accountingtest.Follow(t, x, js)
	// Make it an index of format 2: no key by client or subject.
	for _, prefix := range [][]byte{accounting.ClientPrefix, accounting.SubjectPrefix} {
		if err := accounting.DB(x).DropPrefix(prefix); err != nil {
			t.Fatal(err)
		}
	}
	if err := accounting.DB(x).Update(func(txn *badger.Txn) error { return txn.Set(accounting.FormatKey, []byte{2}) }); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	if x, err = accounting.Open(dir, accounting.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	if pos, err := x.Position(); err != nil || pos != 0 || countKeys(t, x, accounting.RecordPrefix) != 0 {
		t.Fatalf("a format 2 index opened: position %d (err %v), %d records; want it emptied", pos, err, countKeys(t, x, accounting.RecordPrefix))
	}
	accountingtest.Follow(t, x, js)
	for _, q := range []accounting.RecipientQuery{{Client: "onboarding", Limit: 7}, {Client: "onboarding", Subject: "clerk-1", Limit: 7}, {Subject: "clerk-1", Limit: 7}} {
		var wantIDs []string
		for i := 29; i >= 0; i-- {
			if (q.Client == "" || accountingtest.Clients[i%3] == q.Client) && (q.Subject == "" || fmt.Sprintf("clerk-%d", i%4) == q.Subject) {
				wantIDs = append(wantIDs, fmt.Sprintf("b-%d", i), fmt.Sprintf("b-%d", i))
			}
		}
		var got []string
		for _, id := range searchRecipientAll(t, x, q, nil) {
			got = append(got, strings.Fields(id)[1])
		}
		if !slices.Equal(got, wantIDs) || len(got) == 0 {
			t.Errorf("rebuilt, %+v finds the requests %v, want %v", q, got, wantIDs)
		}
	}
	if diff, err := x.CompareWithStream(t.Context(), js, ledger.DefaultStream); err != nil || len(diff) > 0 {
		t.Errorf("the rebuilt index differs from the stream (err %v): %v", err, diff)
	}
}

// TestDigestCountsRecipientKeys: an index's digest equals its stream's
// while each record has its keys by recipient, and differs, saying so,
// when one is missing or one too many.
func TestDigestCountsRecipientKeys(t *testing.T) {
	msgs, all := recipientMessages(t, 500)
	scan := accounting.NewDigest()
	for i := range all {
		if err := scan.Add(all[i].r.PersonID, &all[i].r); err != nil {
			t.Fatal(err)
		}
	}
	someKey := func(t *testing.T, x *accounting.Index, prefix []byte) []byte {
		t.Helper()
		var k []byte
		err := accounting.DB(x).View(func(txn *badger.Txn) error {
			opts := badger.DefaultIteratorOptions
			opts.Prefix = prefix
			it := txn.NewIterator(opts)
			defer it.Close()
			it.Rewind()
			k = it.Item().KeyCopy(nil)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	for _, tc := range []struct {
		name  string
		plant func(t *testing.T, x *accounting.Index)
		want  string // in the difference; "" for none
	}{
		{"as applied", func(*testing.T, *accounting.Index) {}, ""},
		{"a key by client missing", func(t *testing.T, x *accounting.Index) {
			k := someKey(t, x, accounting.ClientPrefix)
			if err := accounting.DB(x).Update(func(txn *badger.Txn) error { return txn.Delete(k) }); err != nil {
				t.Fatal(err)
			}
		}, "keys by client or subject in the index, its records call for"},
		{"a key by subject too many", func(t *testing.T, x *accounting.Index) {
			sk := someKey(t, x, accounting.SubjectPrefix) // a record's place, under a subject it does not have
			k := append(append([]byte("s/user-none"), 0), sk[len(sk)-20:]...)
			if err := accounting.DB(x).Update(func(txn *badger.Txn) error { return txn.Set(k, []byte(accountingtest.Persons[0])) }); err != nil {
				t.Fatal(err)
			}
		}, "keys by client or subject in the index, its records call for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := applied(t, accounting.Options{}, msgs, 16)
			tc.plant(t, x)
			d, err := x.Digest(0)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(d.Diff(scan), "\n")
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("difference %q, want %q", got, tc.want)
			}
		})
	}
}
