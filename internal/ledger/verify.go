package ledger

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
)

// Report is the outcome of Verify.
type Report struct {
	Records  int     // records read, one per disclosed person (format 3: per person listed)
	Messages int     // messages read
	Chains   []Chain // one per chain, by replica then id
	Problems []string
}

// OK reports whether Verify found nothing wrong.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Chain summarises one chain: a replica's (formats 2, 3: its subject, its
// messages numbered First to Last) or a process's (format 1: its records).
type Chain struct {
	ID       string
	Replica  string
	First    uint64 // lowest seq held
	Last     uint64 // highest seq held
	Messages int    // messages held (format 1: one per record)
	Records  int
	Problems int
}

// Verify reads every message of the audit stream and checks it, and
// reports what is wrong (an error means the stream could not be read):
//
//   - the stream must not have lost a message between its first and last
//     sequence (a deleted message, anywhere, the last one too: the
//     stream's last sequence stays when its last message is deleted);
//   - each replica's chain (formats 2 and 3, on its subject, in stream order)
//     must run from message 1 up by one, each message holding the hash of
//     the bytes of the one before it on the subject (an altered message
//     breaks its successor's link), and a message that names the stream
//     sequence it expects before it (Nats-Expected-Last-Subject-Sequence)
//     must follow that one (a message deleted and written again, or
//     messages written in another order, do not);
//   - each format 1 chain must run from record 1 without a gap, each
//     record holding the hash of its predecessor's bytes.
func Verify(ctx context.Context, js jetstream.JetStream, stream string) (Report, error) {
	var rep Report
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return rep, fmt.Errorf("audit stream %q: %w", stream, err)
	}
	state := s.CachedInfo().State
	chains := map[string]*chainCheck{}
	legacy := map[string]*chainOf{}
	next := state.FirstSeq // the next stream sequence expected
	err = readAll(ctx, js, stream, func(m stored) error {
		rep.Messages++
		if m.streamSeq > next {
			rep.Problems = append(rep.Problems, deleted(next, m.streamSeq-1))
		}
		next = m.streamSeq + 1
		if strings.HasPrefix(m.subject, ReplicaSubjectPrefix) {
			c := chains[m.subject]
			if c == nil {
				c = &chainCheck{c: Chain{ID: m.subject[len(ReplicaSubjectPrefix):]}}
				chains[m.subject] = c
			}
			rep.Records += c.add(m, &rep.Problems)
			return nil
		}
		rep.Records++
		r, err := decodeRecord(m.data)
		if err != nil || r.Chain == "" || r.Seq == 0 {
			rep.Problems = append(rep.Problems, fmt.Sprintf("stream sequence %d (%s): not an audit record", m.streamSeq, m.subject))
			return nil //nolint:nilerr // an undecodable record is reported as a problem; the walk goes on
		}
		c := legacy[r.Chain]
		if c == nil {
			c = &chainOf{replica: r.Replica}
			legacy[r.Chain] = c
		}
		c.links = append(c.links, link{seq: r.Seq, streamSeq: m.streamSeq, prev: r.Prev, hash: hashOf(m.data)})
		return nil
	})
	if err != nil {
		return rep, err
	}
	if state.LastSeq >= next && state.LastSeq > 0 {
		rep.Problems = append(rep.Problems, deleted(next, state.LastSeq))
	}
	for _, c := range chains {
		rep.Chains = append(rep.Chains, c.c)
	}
	for id, c := range legacy {
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

// chainCheck is what Verify knows of a format 2 or 3 chain as it reads it: the
// last message read on its subject.
type chainCheck struct {
	c                Chain
	seq, streamSeq   uint64
	hash             string
	readAny, readOne bool
}

// add checks m, the next message on c's subject, and returns the number
// of records it holds.
func (c *chainCheck) add(m stored, problems *[]string) int {
	at := fmt.Sprintf("chain %s, stream sequence %d", c.c.ID, m.streamSeq)
	report := func(format string, args ...any) {
		*problems = append(*problems, at+": "+fmt.Sprintf(format, args...))
		c.c.Problems++
	}
	c.c.Messages++
	hash := hashOf(m.data)
	defer func() { c.streamSeq, c.hash, c.readAny = m.streamSeq, hash, true }()
	msg, err := decodeMessage(m.data)
	if err != nil {
		report("not an audit message: %v", err)
		return 0
	}
	at = fmt.Sprintf("chain %s, message %d (stream sequence %d)", c.c.ID, msg.Seq, m.streamSeq)
	if c.c.Replica == "" {
		c.c.Replica = msg.Replica
	}
	if exp := m.header.Get(expectedLastSubjSeq); exp != "" {
		if n, err := strconv.ParseUint(exp, 10, 64); err != nil || n != c.streamSeq {
			report("was written after stream sequence %s, but follows stream sequence %d on its subject", exp, c.streamSeq)
		}
	}
	switch {
	case !c.readOne:
		c.c.First = msg.Seq
		if msg.Seq == 1 && msg.Prev != "" {
			report("message 1 names a predecessor")
		}
		if msg.Seq > 1 && !c.readAny {
			report("messages 1-%d missing", msg.Seq-1)
		}
	case msg.Seq <= c.seq:
		report("out of order: after message %d", c.seq)
	case msg.Seq == c.seq+2:
		report("message %d missing", c.seq+1)
	case msg.Seq > c.seq+2:
		report("messages %d-%d missing", c.seq+1, msg.Seq-1)
	}
	if c.readOne && msg.Seq == c.seq+1 && msg.Prev != c.hash {
		report("does not hold the hash of the message before it (stream sequence %d): one of the two was altered", c.streamSeq)
	}
	c.readOne = true
	c.seq = max(c.seq, msg.Seq)
	c.c.Last = c.seq
	c.c.Records += len(msg.Records)
	return len(msg.Records)
}

// link is one record of a format 1 chain as Verify keeps it (not the
// whole record: a ledger holds years of them).
type link struct {
	seq, streamSeq uint64
	prev, hash     string
}

// chainOf is what Verify gathers of one format 1 chain.
type chainOf struct {
	replica string
	links   []link
}

// deleted describes the stream sequences from-to, missing from the
// stream: deleted messages.
func deleted(from, to uint64) string {
	if from == to {
		return fmt.Sprintf("stream sequence %d: deleted", from)
	}
	return fmt.Sprintf("stream sequences %d-%d: deleted", from, to)
}

// checkChain checks the links of one format 1 chain (in any order).
func checkChain(id, replica string, links []link) (Chain, []string) {
	sort.SliceStable(links, func(i, j int) bool { return links[i].seq < links[j].seq })
	c := Chain{ID: id, Replica: replica, First: links[0].seq, Last: links[len(links)-1].seq, Messages: len(links), Records: len(links)}
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
