package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lookup/persons/internal/crash"
	"github.com/nats-io/nats.go"
)

// errNotConnected fails the records of a message while NATS is
// unreachable.
var errNotConnected = errors.New("audit: NATS not connected")

// errUnacknowledged fails the messages not acknowledged in time.
var errUnacknowledged = errors.New("audit: message not acknowledged in time")

// message is one message sent and not yet acknowledged.
type message struct {
	bseq    uint64 // its place in its fast batch
	seq     uint64 // its place in the chain
	hash    string // of its bytes, as the next message's prev
	records int
	ended   []*pending // the disclosures whose last record it holds
	cont    *pending   // a disclosure whose records go on in the next message
	sent    time.Time
}

// fail reports err to every disclosure with records in m.
func (m *message) fail(err error) {
	for _, p := range m.ended {
		p.settle(err)
	}
	if m.cont != nil {
		m.cont.settle(err)
	}
}

// state is where the publisher is with its batches.
type state int

const (
	// broken: the chain's head on the server is not known (at start, and
	// after a failure): recover reads it before the next message.
	broken state = iota
	// idle: no batch open; head is the chain's last stored message.
	idle
	// open: a fast batch is open; messages are appended as they come,
	// up to MaxInFlight unacknowledged.
	open
	// closing: the batch is committed; its PubAck is awaited (it gives
	// the stream sequence the next batch expects).
	closing
)

// publisher is the one goroutine that writes a Ledger's chain (see
// publish); nothing else touches it.
type publisher struct {
	l       *Ledger
	ctx     context.Context // cancelled when Close gives up
	fb      *fastBatches
	subject string
	st      state
	b       *batch // the open or closing batch
	// probe is a batch given up on that may still be on the server:
	// recover pings it first, so that nothing of it is stored after.
	probe *batch
	// head is the chain's last stored message (its stream sequence is
	// what the next batch's first message expects); sent is the last
	// message written (head, or beyond while messages are in flight);
	// stored is the last acknowledged.
	head, sent, stored chainHead
	inflight           []*message
	carry              *pending // a disclosure partly written
	carryAt            int      // the index of its next record
	// backlog holds the disclosures taken from the queue and not written
	// yet (backlogRecords records), up to two messages' worth.
	backlog        []*pending
	backlogRecords int
	out            outbox
	msg            *nats.Msg
	timer          *time.Timer // the acknowledgement of what is in flight is due
	// ageTimer fires when the open batch has reached BatchMaxAge: it is
	// ended then if nothing is in flight, else once that is stored.
	ageTimer   *time.Timer
	batchStart time.Time // when the open batch started
	closing    bool      // Close was called: end an idle batch at once
	status     chan nats.Status
}

// chainHead is a message of the chain: its seq, its hash and (when
// stored) its stream sequence.
type chainHead struct {
	seq       uint64
	hash      string
	streamSeq uint64
}

// publish runs the publisher. It gathers the disclosures queued while
// earlier messages are in flight into the next message (up to
// MaxMessageRecords and MaxMessageBytes; a lone disclosure goes out at
// once), chains each message to the one before, and sends it in the open
// fast batch, up to MaxInFlight unacknowledged. A batch takes messages
// until it is BatchMaxAge old, and is ended once they are stored (or
// when Close was called and nothing waits). Each message settles its
// disclosures when it is acknowledged; a message that fails fails every
// message after it (the server's gap mode "fail" refuses them), so the
// chain never has a gap. A batch's first message carries
// Nats-Expected-Last-Subject-Sequence, the stream sequence of the chain's
// last stored message: a message stored by anyone else on the subject
// meanwhile, or one of an earlier batch stored late, makes the server
// refuse the batch; the publisher then reads the chain's head back from
// the stream and goes on from there.
func (l *Ledger) publish() {
	defer close(l.done)
	defer l.batches.close()
	defer crash.Guard()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer crash.Guard()
		select {
		case <-l.abort:
			cancel()
		case <-ctx.Done():
		}
	}()
	pb := &publisher{l: l, ctx: ctx, fb: l.batches, subject: ReplicaSubject(l.cfg.Replica),
		out:      outbox{maxRecords: l.cfg.MaxMessageRecords, maxBytes: l.cfg.MaxMessageBytes},
		msg:      &nats.Msg{Header: nats.Header{}},
		timer:    time.NewTimer(time.Hour),
		ageTimer: time.NewTimer(time.Hour),
		status:   l.nc.StatusChanged(nats.DISCONNECTED, nats.RECONNECTING, nats.CLOSED)}
	defer l.nc.RemoveStatusListener(pb.status)
	pb.timer.Stop()
	pb.ageTimer.Stop()
	for {
		select { // before anything else: Close has given up
		case <-l.abort:
			pb.abandon(ErrClosed)
			pb.failQueued(ErrClosed)
			return
		default:
		}
		pb.gather()
		if pb.closing && pb.drained() {
			return
		}
		if pb.due() {
			pb.send()
			continue
		}
		closingCh := l.closing
		if pb.closing {
			closingCh = nil // closed: seen once
		}
		var queue <-chan *pending
		if pb.backlogRecords < 2*l.cfg.MaxMessageRecords {
			queue = l.queue
		}
		select {
		case p := <-queue:
			pb.take(p)
		case r := <-pb.fb.replies:
			pb.reply(r)
		case <-pb.timer.C:
			if len(pb.inflight) > 0 || pb.st == closing {
				pb.abandon(errUnacknowledged)
			}
		case <-pb.ageTimer.C:
			pb.endIfDone()
		case <-pb.status:
			if !l.nc.IsConnected() {
				pb.abandon(errNotConnected)
			}
		case <-closingCh:
			pb.closing = true
			pb.endIfDone()
		case <-l.abort:
			pb.abandon(ErrClosed)
			pb.failQueued(ErrClosed)
			return
		}
	}
}

// take adds p to the backlog.
func (pb *publisher) take(p *pending) {
	pb.backlog = append(pb.backlog, p)
	pb.backlogRecords += p.records()
}

// gather moves the disclosures queued into the backlog, up to two
// messages' worth.
func (pb *publisher) gather() {
	for pb.backlogRecords < 2*pb.l.cfg.MaxMessageRecords {
		select {
		case p := <-pb.l.queue:
			pb.take(p)
		default:
			return
		}
	}
}

// drained reports whether nothing is queued, written or in flight.
func (pb *publisher) drained() bool {
	return len(pb.l.queue) == 0 && len(pb.backlog) == 0 && pb.carry == nil && len(pb.inflight) == 0 &&
		(pb.st == idle || pb.st == broken)
}

// due reports whether the next message is to be sent now. With no batch
// open, at once: a lone disclosure waits for nothing. In an open batch,
// with a message in flight, only once half a message's worth has gathered
// (or a disclosure did not fit in the last message): the next message
// then holds many disclosures, not one, and several are in flight only
// when the load fills them.
func (pb *publisher) due() bool {
	if pb.carry == nil && len(pb.backlog) == 0 {
		return false
	}
	switch pb.st {
	case idle, broken:
		return true
	case open:
		if len(pb.inflight) >= pb.l.cfg.MaxInFlight || pb.aged() {
			return false // an aged batch is ended once its messages are stored
		}
		return len(pb.inflight) == 0 || pb.carry != nil || 2*pb.backlogRecords >= pb.l.cfg.MaxMessageRecords
	}
	return false
}

// idleAfter reports whether nothing waits to be written.
func (pb *publisher) idleAfter() bool {
	return pb.carry == nil && len(pb.backlog) == 0 && len(pb.l.queue) == 0
}

// send writes the next message, from the disclosure partly written and
// the backlog, and sends it.
func (pb *publisher) send() {
	if err := pb.ready(); err != nil {
		// Fail what is waiting at once rather than one message a time.
		if pb.carry != nil {
			pb.failed(pb.carry, err)
			pb.carry = nil
		}
		pb.failQueued(err)
		return
	}
	m, data := pb.write()
	if !pb.l.batched.Load() {
		pb.sendOne(m, data)
		return
	}
	h := pb.msg.Header
	clear(h)
	if pb.st == idle {
		// A batch is started even for a lone disclosure, and kept open
		// for those that follow within BatchMaxAge (see endIfDone).
		pb.b = pb.fb.newBatch()
		pb.b.seq = 1
		pb.st, pb.batchStart = open, time.Now()
		pb.ageTimer.Reset(pb.l.cfg.BatchMaxAge)
		h[expectedLastSubjSeq] = []string{uitoa(pb.head.streamSeq)}
		pb.msg.Reply = pb.b.reply(1, opStart)
	} else {
		pb.b.seq++
		pb.msg.Reply = pb.b.reply(pb.b.seq, opAppend)
	}
	m.bseq = pb.b.seq
	pb.msg.Subject, pb.msg.Data = pb.subject, data
	pb.track(m)
	// PublishMsg has copied the message into the connection's buffer when
	// it returns: the outbox's buffer is free again.
	if err := pb.l.nc.PublishMsg(pb.msg); err != nil {
		pb.abandon(fmt.Errorf("audit: publish: %w", err))
	}
}

// ready makes sure that a message can be sent: NATS connected, the stream
// there, the chain's head known.
func (pb *publisher) ready() error {
	if !pb.l.nc.IsConnected() {
		// Disconnected, a publish would wait in the reconnect buffer and be
		// stored after the caller was refused: fail at once instead.
		return errNotConnected
	}
	if !pb.l.ensured.Load() {
		if err := pb.l.ensure(); err != nil {
			return err
		}
	}
	if pb.st == broken {
		return pb.recover()
	}
	return nil
}

// write writes the next message: the rest of the disclosure partly
// written, then the backlog, within the message's bounds, one record per
// disclosure (format 3). A disclosure whose persons do not fit whole goes
// on in the next message (pb.carry), in a record of its own there.
func (pb *publisher) write() (*message, []byte) {
	m := &message{seq: pb.sent.seq + 1}
	pb.out.start(pb.l.cfg.Replica, m.seq, pb.sent.hash)
	put := func(p *pending, from int) bool {
		if next := pb.out.add(p, pb.l.cfg.Replica, from); next < p.records() {
			pb.carry, pb.carryAt, m.cont = p, next, p
			return false
		}
		m.ended = append(m.ended, p)
		return true
	}
	full := false
	if p := pb.carry; p != nil {
		pb.carry = nil
		full = !put(p, pb.carryAt)
	}
	n := 0
	for ; !full && n < len(pb.backlog); n++ {
		p := pb.backlog[n]
		pb.backlogRecords -= p.records()
		full = !put(p, 0)
	}
	pb.backlog = append(pb.backlog[:0], pb.backlog[n:]...)
	data := pb.out.finish()
	m.hash, m.records = hashOf(data), pb.out.n
	pb.sent = chainHead{seq: m.seq, hash: m.hash}
	return m, data
}
