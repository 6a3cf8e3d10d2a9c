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

// link is one record of a chain as Verify keeps it (not the whole record:
// a ledger holds years of them).
type link struct {
	seq, streamSeq uint64
	prev, hash     string
}

// chainOf is what Verify gathers of one chain.
type chainOf struct {
	replica string
	links   []link
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
	chains := map[string]*chainOf{}
	next := state.FirstSeq // the next stream sequence expected
	err = readAll(ctx, js, stream, "", func(streamSeq uint64, data []byte) error {
		rep.Records++
		if streamSeq > next {
			rep.Problems = append(rep.Problems, deleted(next, streamSeq-1))
		}
		next = streamSeq + 1
		r, err := decodeRecord(data)
		if err != nil || r.Chain == "" || r.Seq == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("stream sequence %d: not an audit record", streamSeq))
			return nil //nolint:nilerr // an undecodable record is reported as a problem; the walk goes on
		}
		c := chains[r.Chain]
		if c == nil {
			c = &chainOf{replica: r.Replica}
			chains[r.Chain] = c
		}
		c.links = append(c.links, link{seq: r.Seq, streamSeq: streamSeq, prev: r.Prev, hash: hashOf(data)})
		return nil
	})
	if err != nil {
		return rep, err
	}
	if state.LastSeq >= next && state.LastSeq > 0 {
		rep.Problems = append(rep.Problems, deleted(next, state.LastSeq))
	}
	for id, c := range chains {
		ch, problems := checkChain(id, c.replica, c.links)
		rep.Chains = append(rep.Chains, ch)
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

// deleted describes the stream sequences from-to, missing from the
// stream: deleted records.
func deleted(from, to uint64) string {
	if from == to {
		return fmt.Sprintf("stream sequence %d: deleted", from)
	}
	return fmt.Sprintf("stream sequences %d-%d: deleted", from, to)
}

// checkChain checks the links of one chain (in any order).
func checkChain(id, replica string, links []link) (Chain, []string) {
	sort.SliceStable(links, func(i, j int) bool { return links[i].seq < links[j].seq })
	c := Chain{ID: id, Replica: replica, First: links[0].seq, Last: links[len(links)-1].seq, Records: len(links)}
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
			if cur.seq == 1 && cur.prev != "" {
				add("record 1 (stream sequence %d) altered: it names a predecessor", cur.streamSeq)
			}
			continue
		}
		prev := &links[i-1]
		switch {
		case cur.seq == prev.seq:
			if cur.hash != prev.hash {
				add("record %d held twice with different contents (stream sequences %d, %d)", cur.seq, prev.streamSeq, cur.streamSeq)
			}
		case cur.seq > prev.seq+1:
			if cur.seq == prev.seq+2 {
				add("record %d missing", prev.seq+1)
			} else {
				add("records %d-%d missing", prev.seq+1, cur.seq-1)
			}
		case cur.prev != prev.hash:
			add("record %d (stream sequence %d) altered, or record %d (stream sequence %d) is not its predecessor: hashes differ",
				prev.seq, prev.streamSeq, cur.seq, cur.streamSeq)
		}
	}
	return c, problems
}
