package audit

import (
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// outbox turns the records of a batch into the messages that store them,
// chaining each record to the one before. The publisher keeps one and
// reuses its memory from batch to batch: the records' bytes go into one
// buffer and each message keeps its header map, so a record costs no
// record, buffer, map or message of its own.
type outbox struct {
	buf  []byte      // the records' bytes, one after the other
	msgs []*nats.Msg // msgs[:n] are this batch's
}

// fill writes the records of batch (in queue order), by replica, chained
// into c, and returns their messages, valid until the next fill.
func (o *outbox) fill(c *chain, replica string, batch []*pending) []*nats.Msg {
	o.buf = o.buf[:0]
	n := 0
	var r Record
	for _, p := range batch {
		for i := range p.records() {
			p.record(i, replica, &r)
			c.seq++
			r.Chain, r.Seq, r.Prev = c.id, c.seq, c.prev
			start := len(o.buf)
			o.buf = appendRecord(o.buf, &r)
			// A full slice expression: a record's bytes end where the next
			// begin, and when buf grows the earlier ones stay where they were.
			data := o.buf[start:len(o.buf):len(o.buf)]
			c.prev = hashOf(data)
			m := o.msg(n)
			m.Subject, m.Data = Subject(r.PersonID), data
			m.Header[jetstream.MsgIDHeader][0] = msgID(c.id, c.seq)
			n++
		}
	}
	return o.msgs[:n]
}

// msg returns the outbox's i-th message (i <= len(o.msgs)), with a header
// map holding one message id.
func (o *outbox) msg(i int) *nats.Msg {
	if i == len(o.msgs) {
		o.msgs = append(o.msgs, &nats.Msg{Header: nats.Header{jetstream.MsgIDHeader: []string{""}}})
	}
	m := o.msgs[i]
	m.Reply = ""
	return m
}
