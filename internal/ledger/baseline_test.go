package ledger

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lookup/persons/events"
	"github.com/nats-io/nats.go"
)

// perRecord is the ledger before group commit, kept as the benchmarks'
// baseline: one goroutine takes every disclosure queued (up to 256
// records), stores one message per record (format 1, on the person's
// subject) as one fast batch, waits for its PubAck, and settles them.
type perRecord struct {
	nc    *nats.Conn
	inbox string
	repl  chan *nats.Msg
	queue chan *pending
	stop  chan struct{}
}

func newPerRecord(tb testing.TB, nc *nats.Conn) *perRecord {
	tb.Helper()
	b := &perRecord{nc: nc, inbox: nc.NewInbox(), repl: make(chan *nats.Msg, 64),
		queue: make(chan *pending, 4096), stop: make(chan struct{})}
	sub, err := nc.ChanSubscribe(b.inbox+".>", b.repl)
	if err != nil {
		tb.Fatal(err)
	}
	go b.run()
	tb.Cleanup(func() { close(b.stop); _ = sub.Unsubscribe() })
	return b
}

func (b *perRecord) Disclose(ctx context.Context, d events.Disclosure) error {
	if len(d.Persons) == 0 {
		return nil
	}
	p := &pending{d: d, time: time.Now().UTC(), done: make(chan error, 1)}
	select {
	case b.queue <- p:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *perRecord) run() {
	var prev string
	chain, seq := uuid.NewString(), uint64(0)
	for {
		var batch []*pending
		select {
		case p := <-b.queue:
			batch = append(batch, p)
		case <-b.stop:
			return
		}
		n := batch[0].records()
		for more := true; more && n < 256; {
			select {
			case p := <-b.queue:
				batch = append(batch, p)
				n += p.records()
			default:
				more = false
			}
		}
		var msgs []*nats.Msg
		var r Record
		for _, p := range batch {
			for i := range p.records() {
				p.record(i, "bench", &r)
				seq++
				r.Chain, r.Seq, r.Prev = chain, seq, prev
				data := appendRecord(nil, &r)
				prev = hashOf(data)
				msgs = append(msgs, &nats.Msg{Subject: LegacySubjectPrefix + r.PersonID, Data: data,
					Header: nats.Header{"Nats-Msg-Id": []string{chain + "-" + strconv.FormatUint(seq, 10)}}})
			}
		}
		err := b.store(msgs)
		for _, p := range batch {
			p.done <- err
		}
	}
}

func (b *perRecord) store(msgs []*nats.Msg) error {
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	prefix := b.inbox + "." + id + "."
	for i, m := range msgs {
		op := opAppend
		switch {
		case i == len(msgs)-1:
			op = opCommit
		case i == 0:
			op = opStart
		}
		m.Reply = prefix + "512.fail." + strconv.Itoa(i+1) + "." + strconv.Itoa(op) + ".$FI"
		if err := b.nc.PublishMsg(m); err != nil {
			return err
		}
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case r := <-b.repl:
			if !strings.HasPrefix(r.Subject, prefix) {
				continue
			}
			var rep batchReply
			if err := json.Unmarshal(r.Data, &rep); err != nil {
				return err
			}
			if rep.Batch == id && rep.Count == uint64(len(msgs)) {
				return nil
			}
			if rep.Error != nil || rep.Type == "gap" || rep.Type == "err" || rep.Batch == id {
				return errUnacknowledged
			}
		case <-timeout:
			return errUnacknowledged
		}
	}
}
