package audit

import (
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/query"
)

// pendings returns n disclosures of one person each.
func pendings(n int) []*pending {
	b := make([]*pending, n)
	for i := range b {
		b[i] = &pending{d: query.Disclosure{RequestID: fmt.Sprint("req-", i), Operation: "getPerson",
			Persons: []query.DisclosedPerson{{ID: personA}}}}
	}
	return b
}

// TestOutboxChainsRecordsAcrossReusedBatches: the outbox reuses its buffer
// and messages, yet each message holds its own record, message id and
// subject, and the chain runs on from one batch to the next.
func TestOutboxChainsRecordsAcrossReusedBatches(t *testing.T) {
	var o outbox
	c := newChain()
	prev := ""
	seq := uint64(0)
	for _, n := range []int{3, 40, 2} { // the second outgrows the first's buffer and messages
		msgs := o.fill(&c, "r1", pendings(n))
		if len(msgs) != n {
			t.Fatalf("fill: %d messages, want %d", len(msgs), n)
		}
		ids := map[string]bool{}
		for i, m := range msgs {
			seq++
			r, err := decodeRecord(m.Data)
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
			if r.Chain != c.id || r.Seq != seq || r.Prev != prev || r.RequestID != fmt.Sprint("req-", i) || r.Replica != "r1" {
				t.Fatalf("record %d = %+v, want chain %s seq %d prev %q", i, r, c.id, seq, prev)
			}
			if id := m.Header.Get(jetstream.MsgIDHeader); id != msgID(c.id, seq) || ids[id] {
				t.Fatalf("message %d: id %q, want %q (once)", i, id, msgID(c.id, seq))
			}
			ids[m.Header.Get(jetstream.MsgIDHeader)] = true
			if m.Subject != Subject(personA) || m.Reply != "" {
				t.Fatalf("message %d: subject %q reply %q", i, m.Subject, m.Reply)
			}
			prev = hashOf(m.Data)
		}
		if c.prev != prev || c.seq != seq {
			t.Fatalf("chain at seq %d prev %q, want %d %q", c.seq, c.prev, seq, prev)
		}
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

// BenchmarkOutboxFill is what the ledger's publisher spends in lookupd's
// process per record before NATS: the record's JSON, its hash and its
// message (reported per record, with its allocations).
func BenchmarkOutboxFill(b *testing.B) {
	var o outbox
	c := newChain()
	batch := make([]*pending, 50) // five signers each, as the signers GET with expand
	for i := range batch {
		d := disclosure(fmt.Sprint("req-", i), personA, personB, personA, personB, personA)
		batch[i] = &pending{d: d, time: time.Now().UTC(), pos: 1843}
	}
	b.ReportAllocs()
	for b.Loop() {
		o.fill(&c, "lookupd-0", batch)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*250), "ns/record")
}

// TestHashOfIsHexSHA256: Prev is documented as the hex SHA-256 of the
// previous record's bytes, which anyone may check without lookupd.
func TestHashOfIsHexSHA256(t *testing.T) {
	const abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" // FIPS 180-2, "abc"
	if got := hashOf([]byte("abc")); got != abc {
		t.Errorf("hashOf(abc) = %s, want %s", got, abc)
	}
}
