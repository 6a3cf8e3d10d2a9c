package ledger

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// How the publisher settles what it sent (see publish.go): the server's
// answers to a batch's messages, each disclosure released when the
// message holding its last record is stored, or failed with every
// message after one that was not.

// track notes m as in flight.
func (pb *publisher) track(m *message) {
	m.sent = time.Now()
	if len(pb.inflight) == 0 {
		pb.timer.Reset(pb.l.cfg.AckTimeout)
	}
	pb.inflight = append(pb.inflight, m)
	if n := int64(len(pb.inflight)); n > pb.l.peakInFlight.Load() {
		pb.l.peakInFlight.Store(n)
	}
	pb.l.metrics.recordsPerMessage.Observe(float64(m.records))
	pb.l.metrics.inFlight.Set(float64(len(pb.inflight)))
}

// reply handles the server's answer r to a message of the current batch.
func (pb *publisher) reply(r *nats.Msg) {
	if !pb.b.owns(r) {
		return // about a batch given up on
	}
	rep, err := parseBatchReply(r)
	if err != nil {
		pb.abandon(err)
		return
	}
	pb.timer.Reset(pb.l.cfg.AckTimeout) // the server is answering
	switch {
	case rep.Type == "ack":
		pb.acked(rep.Seq)
		pb.endIfDone()
	case rep.Type == "gap": // messages from LastSeq on were lost; the PubAck follows
		pb.failFrom(rep.LastSeq, errors.New("audit: message lost on its way to the stream"))
		pb.st = closing
	case rep.Type == "err": // message Seq was refused; the PubAck follows
		err := fmt.Errorf("audit: message refused: %w", rep.Error)
		if rep.Error == nil {
			err = fmt.Errorf("audit: message refused: %s", r.Data)
		}
		pb.failFrom(rep.Seq, err)
		pb.st = closing
	case rep.pubAck() && rep.Error != nil:
		pb.abandon(fmt.Errorf("audit: batch refused: %w", rep.Error))
		pb.probe = nil // ended by the server
	case rep.pubAck():
		pb.acked(rep.Count)
		if len(pb.inflight) > 0 {
			pb.failFrom(0, fmt.Errorf("audit: stream stored %d messages of the batch", rep.Count))
		}
		if pb.stored != pb.sent {
			pb.st = broken // some failed: read the head back
		} else {
			pb.head = chainHead{seq: pb.stored.seq, hash: pb.stored.hash, streamSeq: rep.Seq}
			if rep.Count == 0 {
				pb.head.streamSeq = pb.stored.streamSeq
			}
			pb.sent, pb.stored, pb.st = pb.head, pb.head, idle
		}
		pb.b = nil
		pb.timer.Stop()
	}
}

// endIfDone ends the open batch once nothing is in flight, if it is
// BatchMaxAge old (what waits then goes in the next batch), or if Close
// was called and nothing waits. Until then a disclosure is appended to
// it: stored sooner than a batch's first message, which the server checks
// against the chain's last stored one.
func (pb *publisher) endIfDone() {
	if pb.st != open || len(pb.inflight) > 0 {
		return
	}
	if pb.aged() || pb.closing && pb.idleAfter() {
		pb.end()
	}
}

// aged reports whether the open batch is BatchMaxAge old: it takes no
// more messages. It reads the clock rather than a flag set when ageTimer
// fires: the timer only wakes the loop, and a disclosure taken from the
// queue before the timer's tick would otherwise be appended to a batch
// already past its age (TestLedgerLoneDisclosuresShareAnOpenBatch caught
// it).
func (pb *publisher) aged() bool {
	return time.Since(pb.batchStart) >= pb.l.cfg.BatchMaxAge
}

// end ends the open batch with nothing in flight: an end-of-batch
// message, not stored; its PubAck gives the last stream sequence.
func (pb *publisher) end() {
	pb.b.seq++
	clear(pb.msg.Header)
	pb.msg.Subject, pb.msg.Data, pb.msg.Reply = pb.subject, nil, pb.b.reply(pb.b.seq, opCommitEOB)
	pb.st = closing
	pb.timer.Reset(pb.l.cfg.AckTimeout)
	if err := pb.l.nc.PublishMsg(pb.msg); err != nil {
		pb.abandon(fmt.Errorf("audit: publish: %w", err))
	}
}

// acked settles the messages in flight up to batch sequence bseq: stored.
func (pb *publisher) acked(bseq uint64) {
	n := 0
	for _, m := range pb.inflight {
		if m.bseq > bseq {
			break
		}
		for _, p := range m.ended {
			p.settle(nil)
		}
		pb.stored = chainHead{seq: m.seq, hash: m.hash}
		pb.l.metrics.records.WithLabelValues("stored").Add(float64(m.records))
		pb.l.metrics.commit.Observe(time.Since(m.sent).Seconds())
		n++
	}
	pb.inflight = append(pb.inflight[:0], pb.inflight[n:]...)
	pb.l.metrics.inFlight.Set(float64(len(pb.inflight)))
}

// failFrom fails the messages in flight from batch sequence bseq on, and
// the disclosure partly written.
func (pb *publisher) failFrom(bseq uint64, err error) {
	keep := pb.inflight[:0]
	for _, m := range pb.inflight {
		if m.bseq < bseq {
			keep = append(keep, m)
			continue
		}
		m.fail(err)
		pb.l.failed(m.records, err)
	}
	pb.inflight = keep
	if pb.carry != nil {
		pb.carry.settle(err) // its records written so far are failed
		pb.carry = nil
	}
	pb.l.metrics.inFlight.Set(float64(len(pb.inflight)))
}

// abandon fails every message in flight and gives up on the batch: the
// chain's head is read back before the next message.
func (pb *publisher) abandon(err error) {
	pb.failFrom(0, err)
	if pb.b != nil {
		pb.probe = pb.b
	}
	pb.b, pb.st = nil, broken
	pb.timer.Stop()
}

// failQueued fails every disclosure in the backlog and queued.
func (pb *publisher) failQueued(err error) {
	for _, p := range pb.backlog {
		pb.failed(p, err)
	}
	clear(pb.backlog)
	pb.backlog, pb.backlogRecords = pb.backlog[:0], 0
	for {
		select {
		case p := <-pb.l.queue:
			pb.failed(p, err)
		default:
			return
		}
	}
}

// failed fails p, not written.
func (pb *publisher) failed(p *pending, err error) {
	p.settle(err)
	pb.l.failed(p.records(), err)
}
