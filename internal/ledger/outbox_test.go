package ledger

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestOutboxWritesWhatJSONMarshalWrites: a message written record by
// record is the JSON of its Message, and decodes back to its records.
func TestOutboxWritesWhatJSONMarshalWrites(t *testing.T) {
	recs := []Record{
		{Time: time.Date(2026, 11, 22, 12, 0, 3, 0, time.UTC), RequestID: "req-1", Subject: "alice", Client: "app",
			Tenants: []string{"t1"}, Operation: "getAuthorizedSigners", PersonID: personA, SSNMode: "LAST4",
			DOBDisclosed: true, Purpose: "TREAT", Persons: 2, Replica: "r\"1", ReadModelSeq: 9},
		{Time: time.Date(2026, 11, 22, 12, 0, 3, 0, time.UTC), RequestID: "req-1", Operation: "getAuthorizedSigners",
			PersonID: personB, Persons: 2, Replica: "r\"1"},
	}
	for _, tc := range []struct {
		name string
		prev string
	}{{"first of a chain", ""}, {"later", "9e4b"}} {
		t.Run(tc.name, func(t *testing.T) {
			o := outbox{maxRecords: 10, maxBytes: 1 << 20}
			o.start("r\"1", 7, tc.prev)
			for i := range recs {
				if !o.add(&recs[i]) {
					t.Fatalf("record %d not taken", i)
				}
			}
			got := o.finish()
			want, err := json.Marshal(Message{Version: FormatVersion, Replica: "r\"1", Seq: 7, Prev: tc.prev, Records: recs})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("outbox =\n%s\nwant (json.Marshal)\n%s", got, want)
			}
			m, err := decodeMessage(got)
			if err != nil || len(m.Records) != 2 || m.Records[1].PersonID != personB || m.Seq != 7 {
				t.Errorf("decodeMessage = %+v, %v", m, err)
			}
		})
	}
}

// TestOutboxBounds: a message takes no record beyond its bounds, but
// always its first.
func TestOutboxBounds(t *testing.T) {
	r := Record{RequestID: "req", PersonID: personA, Operation: "getPerson", Replica: "r1"}
	one := len(appendRecord(nil, &r))
	for _, tc := range []struct {
		name                 string
		maxRecords, maxBytes int
		want                 int
	}{
		{"by records", 3, 1 << 20, 3},
		{"by bytes", 100, 200 + 3*one, 3},
		{"first always", 100, 10, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := outbox{maxRecords: tc.maxRecords, maxBytes: tc.maxBytes}
			o.start("r1", 1, "")
			n := 0
			for o.add(&r) {
				n++
				if n > 1000 {
					t.Fatal("no bound")
				}
			}
			if n != tc.want {
				t.Errorf("took %d records, want %d", n, tc.want)
			}
			if data := o.finish(); n > 1 && len(data) > tc.maxBytes {
				t.Errorf("message of %d bytes, bound %d", len(data), tc.maxBytes)
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
	var r Record
	p.record(0, "r1", &r)
	if r.PersonID != personA || r.ReadModelSeq != 7 || r.Persons != 2 || r.Replica != "r1" {
		t.Errorf("record = %+v, want person %s at position 7 of 2, by r1", r, personA)
	}
}

// BenchmarkOutboxWrite is what the ledger's publisher spends in lookupd's
// process per record before NATS: the record's JSON in its message, and
// the message's hash (reported per record, with its allocations).
func BenchmarkOutboxWrite(b *testing.B) {
	o := outbox{maxRecords: 256, maxBytes: 56 << 10}
	batch := make([]*pending, 50) // five signers each, as the signers GET with expand
	for i := range batch {
		d := disclosure(fmt.Sprint("req-", i), personA, personB, personA, personB, personA)
		batch[i] = &pending{d: d, time: time.Now().UTC(), pos: 1843}
	}
	b.ReportAllocs()
	var r Record
	for b.Loop() {
		o.start("lookupd-0", 1, "")
		for _, p := range batch {
			for i := range p.records() {
				p.record(i, "lookupd-0", &r)
				o.add(&r)
			}
		}
		_ = hashOf(o.finish())
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*250), "ns/record")
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
