package audit

import (
	"context"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
)

// Report is the outcome of Verify.
type Report struct {
	Records  int     // records read
	Chains   []Chain // one per chain, by replica then first time
	Problems []string
}

// OK reports whether Verify found nothing wrong.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Chain summarises one chain of records.
type Chain struct {
	ID       string
	Replica  string
	First    uint64 // lowest seq held
	Last     uint64 // highest seq held
	Records  int
	Problems int
}

// link is one record of a chain as Verify sees it.
type link struct {
	rec       Record
	hash      string
	streamSeq uint64
}

// Verify reads every record of the audit stream and checks it: each chain
// must run from seq 1 without a gap, each record must hold the hash of
// its predecessor's bytes, no seq may be held twice, and the stream must
// not have lost a message between its first and last sequence (a deleted
// record). An error means the stream could not be read; what is wrong
// with the records is in the Report.
func Verify(ctx context.Context, js jetstream.JetStream, stream string) (Report, error) {
	var rep Report
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return rep, fmt.Errorf("audit stream %q: %w", stream, err)
	}
	state := s.CachedInfo().State
	msgs, err := readAll(ctx, js, stream, "")
	if err != nil {
		return rep, err
	}
	rep.Records = len(msgs)
	rep.Problems = append(rep.Problems, deletedSeqs(msgs, state.FirstSeq, state.LastSeq)...)
	chains := map[string][]link{}
	for _, m := range msgs {
		r, err := decodeRecord(m.data)
		if err != nil || r.Chain == "" || r.Seq == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("stream sequence %d: not an audit record", m.streamSeq))
			continue
		}
		chains[r.Chain] = append(chains[r.Chain], link{rec: r, hash: hashOf(m.data), streamSeq: m.streamSeq})
	}
	for id, links := range chains {
		c, problems := checkChain(id, links)
		rep.Chains = append(rep.Chains, c)
		rep.Problems = append(rep.Problems, problems...)
	}
	sort.Slice(rep.Chains, func(i, j int) bool {
		if rep.Chains[i].Replica != rep.Chains[j].Replica {
			return rep.Chains[i].Replica < rep.Chains[j].Replica
		}
		return rep.Chains[i].ID < rep.Chains[j].ID
	})
	return rep, nil
}

// deletedSeqs reports the stream sequences between first and last that
// msgs (in stream order) lack: records deleted from the stream.
func deletedSeqs(msgs []stored, first, last uint64) []string {
	var out []string
	next := first
	report := func(from, to uint64) {
		if from == to {
			out = append(out, fmt.Sprintf("stream sequence %d: deleted", from))
		} else {
			out = append(out, fmt.Sprintf("stream sequences %d-%d: deleted", from, to))
		}
	}
	for _, m := range msgs {
		if m.streamSeq > next {
			report(next, m.streamSeq-1)
		}
		next = m.streamSeq + 1
	}
	if last >= next && last > 0 {
		report(next, last)
	}
	return out
}

// checkChain checks the links of one chain (in any order).
func checkChain(id string, links []link) (Chain, []string) {
	sort.SliceStable(links, func(i, j int) bool { return links[i].rec.Seq < links[j].rec.Seq })
	c := Chain{ID: id, Replica: links[0].rec.Replica, First: links[0].rec.Seq,
		Last: links[len(links)-1].rec.Seq, Records: len(links)}
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("chain %s (replica %s): ", id, c.Replica)+fmt.Sprintf(format, args...))
		c.Problems++
	}
	if c.First != 1 {
		add("records 1-%d missing", c.First-1)
	}
	for i := range links {
		cur := &links[i]
		if i == 0 {
			if cur.rec.Seq == 1 && cur.rec.Prev != "" {
				add("record 1 (stream sequence %d) altered: it names a predecessor", cur.streamSeq)
			}
			continue
		}
		prev := &links[i-1]
		switch {
		case cur.rec.Seq == prev.rec.Seq:
			if cur.hash != prev.hash {
				add("record %d held twice with different contents (stream sequences %d, %d)", cur.rec.Seq, prev.streamSeq, cur.streamSeq)
			}
		case cur.rec.Seq > prev.rec.Seq+1:
			if cur.rec.Seq == prev.rec.Seq+2 {
				add("record %d missing", prev.rec.Seq+1)
			} else {
				add("records %d-%d missing", prev.rec.Seq+1, cur.rec.Seq-1)
			}
		case cur.rec.Prev != prev.hash:
			add("record %d (stream sequence %d) altered, or record %d (stream sequence %d) is not its predecessor: hashes differ",
				prev.rec.Seq, prev.streamSeq, cur.rec.Seq, cur.streamSeq)
		}
	}
	return c, problems
}
