package ledger

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lookup/persons/events"
)

// TestOutboxWritesWhatJSONMarshalWrites: a message written answer by
// answer is the JSON of its answerMessage, and decodes back to one record
// per person, each with its place among the message's persons.
func TestOutboxWritesWhatJSONMarshalWrites(t *testing.T) {
	at := time.Date(2026, 11, 22, 12, 0, 3, 0, time.UTC)
	p1 := &pending{d: events.Disclosure{RequestID: "req-1", Subject: "alice", Client: "app", Tenants: []string{"t1", "t\"2"},
		Operation: "getAuthorizedSigners", Purpose: "TREAT", Persons: []events.DisclosedPerson{
			{ID: personA, SSNMode: "LAST4", DOB: true}, {ID: personB}}}, time: at, pos: 9}
	p2 := &pending{d: events.Disclosure{RequestID: "req-2\u2028é", Operation: "provideAccounting", Requested: "2026-11-20",
		Persons: []events.DisclosedPerson{{ID: personB, SSNMode: "FULL"}}}, time: at.Add(time.Millisecond)}
	want := answerMessage{Version: FormatVersion, Replica: "r\"1", Seq: 7, Records: []answer{
		{Time: at, RequestID: "req-1", Subject: "alice", Client: "app", Tenants: []string{"t1", "t\"2"}, Operation: "getAuthorizedSigners",
			Purpose: "TREAT", Persons: 2, Replica: "r\"1", ReadModelSeq: 9, Disclosed: []Disclosed{
				{PersonID: personA, SSNMode: "LAST4", DOBDisclosed: true}, {PersonID: personB}}},
		{Time: at.Add(time.Millisecond), RequestID: "req-2\u2028é", Operation: "provideAccounting", Requested: "2026-11-20",
			Persons: 1, Replica: "r\"1", Disclosed: []Disclosed{{PersonID: personB, SSNMode: "FULL"}}},
	}}
	for _, prev := range []string{"", "9e4b"} {
		t.Run("prev="+prev, func(t *testing.T) {
			o := outbox{maxRecords: 10, maxBytes: 1 << 20}
			o.start("r\"1", 7, prev)
			for _, p := range []*pending{p1, p2} {
				if n := o.add(p, "r\"1", 0); n != p.records() {
					t.Fatalf("%s: %d persons taken, want %d", p.d.RequestID, n, p.records())
				}
			}
			got := o.finish()
			want.Prev = prev
			data, err := json.Marshal(want)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(data) {
				t.Fatalf("outbox =\n%s\nwant (json.Marshal)\n%s", got, data)
			}
			m, err := decodeMessage(got)
			if err != nil {
				t.Fatal(err)
			}
			recs := recordsOf("audit.replicas.r1", m)
			var ids []string
			for _, r := range recs {
				ids = append(ids, fmt.Sprintf("%s %s %s %v %d %d", r.RequestID, r.PersonID, r.SSNMode, r.DOBDisclosed, r.Persons, r.Index))
			}
			wantIDs := []string{"req-1 " + personA + " LAST4 true 2 1", "req-1 " + personB + "  false 2 2", "req-2\u2028é " + personB + " FULL false 1 3"}
			if !slices.Equal(ids, wantIDs) || m.Seq != 7 || recs[2].Requested != "2026-11-20" || recs[1].Tenants[1] != "t\"2" {
				t.Errorf("records =\n%q\nwant\n%q", ids, wantIDs)
			}
		})
	}
}

// TestOutboxBounds: a message takes no person beyond its bounds, but
// always its first; an answer that does not fit goes on in the next
// message, in a record of its own there.
func TestOutboxBounds(t *testing.T) {
	p := &pending{d: disclosure("req", personA, personB, personA, personB, personA)}
	one := len(appendPerson(nil, &p.d.Persons[0])) + 1
	head := len(appendAnswer(nil, p, "r1"))
	for _, tc := range []struct {
		name                 string
		maxRecords, maxBytes int
		want                 []int // the persons of each message
	}{
		{"whole", 10, 1 << 20, []int{5}},
		{"by persons", 3, 1 << 20, []int{3, 2}},
		{"by bytes", 100, 64 + head + 2*one, []int{2, 2, 1}},
		{"first always", 100, 10, []int{1, 1, 1, 1, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []int
			for from := 0; from < p.records(); {
				o := outbox{maxRecords: tc.maxRecords, maxBytes: tc.maxBytes}
				o.start("r1", 1, "")
				next := o.add(p, "r1", from)
				if o.add(p, "r1", next) != next && next < p.records() {
					t.Fatal("a second record of the answer in one message")
				}
				data := o.finish()
				if next-from > 1 && len(data) > tc.maxBytes {
					t.Errorf("message of %d bytes, bound %d", len(data), tc.maxBytes)
				}
				m, err := decodeMessage(data)
				if err != nil || len(m.Records) != next-from || m.Records[0].PersonID != p.d.Persons[from].ID || m.Records[0].Persons != 5 {
					t.Fatalf("message %s: %+v, %v", data, m, err)
				}
				got, from = append(got, next-from), next
				if len(got) > 10 {
					t.Fatal("no progress")
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("persons per message %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPendingKeepsItsOwnPersons: a best-effort caller has its answer before
// the records are written, and may reuse its slice of persons meanwhile.
func TestPendingKeepsItsOwnPersons(t *testing.T) {
	l := &Ledger{cfg: Config{Now: time.Now, Position: func() uint64 { return 7 }}}
	d := disclosure("req-1", personA, personB)
	p := l.newPending(d)
	d.Persons[0].ID = "reused"
	o := outbox{maxRecords: 10, maxBytes: 1 << 20}
	o.start("r1", 1, "")
	o.add(p, "r1", 0)
	m, err := decodeMessage(o.finish())
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Records[0]; r.PersonID != personA || r.ReadModelSeq != 7 || r.Persons != 2 || r.Replica != "r1" {
		t.Errorf("record = %+v, want person %s at position 7 of 2, by r1", r, personA)
	}
}

// BenchmarkOutboxWrite is what the ledger's publisher spends in lookupd's
// process per person before NATS: the answers' JSON in their message, and
// the message's hash (reported per person, with its allocations), for
// answers of one and five persons.
func BenchmarkOutboxWrite(b *testing.B) {
	for _, persons := range []int{1, 5} {
		b.Run(fmt.Sprintf("persons=%d", persons), func(b *testing.B) {
			o := outbox{maxRecords: 256, maxBytes: 56 << 10}
			batch := make([]*pending, 250/persons)
			for i := range batch {
				d := benchDisclosure(persons)
				d.RequestID = fmt.Sprint("req-", i)
				batch[i] = &pending{d: d, time: time.Now().UTC(), pos: 1843}
			}
			b.ReportAllocs()
			for b.Loop() {
				o.start("lookupd-0", 1, "")
				for _, p := range batch {
					o.add(p, "lookupd-0", 0)
				}
				_ = hashOf(o.finish())
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*250), "ns/record")
		})
	}
}

// TestHashOfIsHexSHA256: Prev is documented as the hex SHA-256 of the
// previous message's bytes, which anyone may check without lookupd.
func TestHashOfIsHexSHA256(t *testing.T) {
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // FIPS 180-2, "abc"
	if got := hashOf([]byte("abc")); got != abc {
		t.Errorf("hashOf(abc) = %s, want %s", got, abc)
	}
}

func TestReplicaToken(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"lookupd-0", "lookupd-0"}, {"", "unnamed"}, {"a.b c*d>e\tf", "a_b_c_d_e_f"}, {"é", "é"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := replicaToken(tc.in); got != tc.want {
				t.Errorf("replicaToken(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
