package ledger

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// expectedLastSubjSeq is the header by which a message names the stream
// sequence of the last message on its subject it expects (0: none): the
// server refuses it otherwise.
const expectedLastSubjSeq = jetstream.ExpectedLastSubjSeqHeader

func uitoa(n uint64) string { return strconv.FormatUint(n, 10) }

// recover reads the chain's head back from the stream, after the batch
// given up on (if any) has been pinged: once the server has answered the
// ping, it has handled every message sent before it, so none of them is
// stored after the head is read. (One that is would still be caught: the
// next batch's first message expects the head's stream sequence.)
func (pb *publisher) recover() error {
	ctx, cancel := context.WithTimeout(pb.ctx, pb.l.cfg.AckTimeout)
	defer cancel()
	if pb.probe != nil {
		if err := pb.ping(ctx, pb.probe); err != nil {
			return err
		}
		pb.probe = nil
	}
	h, err := lastOfChain(ctx, pb.l.js, pb.l.cfg.Stream, pb.subject)
	if err != nil {
		return err
	}
	pb.head, pb.sent, pb.stored, pb.st = h, h, h, idle
	return nil
}

// ping asks the server about batch b and waits for its answer.
func (pb *publisher) ping(ctx context.Context, b *batch) error {
	reply := b.reply(max(b.seq, 1), opPing)
	clear(pb.msg.Header)
	pb.msg.Subject, pb.msg.Data, pb.msg.Reply = pb.subject, nil, reply
	if err := pb.l.nc.PublishMsg(pb.msg); err != nil {
		return fmt.Errorf("audit: ping an earlier batch: %w", err)
	}
	for {
		select {
		case r := <-pb.fb.replies:
			if r.Subject == reply {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("audit: an earlier batch unanswered: %w", ctx.Err())
		}
	}
}

// lastOfChain returns the last message on subject (the zero chainHead
// when there is none). A message that is not of format 2 or 3 starts a new
// chain after it (Verify reports it).
func lastOfChain(ctx context.Context, js jetstream.JetStream, stream, subject string) (chainHead, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return chainHead{}, fmt.Errorf("audit stream %q: %w", stream, err)
	}
	raw, err := s.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return chainHead{}, nil
	}
	if err != nil {
		return chainHead{}, fmt.Errorf("audit: read the chain's last message: %w", err)
	}
	h := chainHead{hash: hashOf(raw.Data), streamSeq: raw.Sequence}
	if m, err := decodeMessage(raw.Data); err == nil {
		h.seq = m.Seq
	}
	return h, nil
}

// sendOne stores m when the stream does not allow fast batches: one
// message at a time, each expecting the one before on the subject.
func (pb *publisher) sendOne(m *message, data []byte) {
	ctx, cancel := context.WithTimeout(pb.ctx, pb.l.cfg.AckTimeout)
	defer cancel()
	m.bseq = 1
	pb.track(m)
	ack, err := pb.l.js.PublishMsg(ctx, &nats.Msg{Subject: pb.subject, Data: data},
		jetstream.WithExpectLastSequencePerSubject(pb.head.streamSeq))
	if err != nil {
		pb.abandon(fmt.Errorf("audit: publish: %w", err))
		pb.probe = nil
		return
	}
	pb.acked(1)
	pb.head = chainHead{seq: m.seq, hash: m.hash, streamSeq: ack.Sequence}
	pb.sent, pb.stored = pb.head, pb.head
	pb.timer.Stop()
}
