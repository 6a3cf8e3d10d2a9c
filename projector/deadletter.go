package projector

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lookup/persons/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers set on every dead-lettered message. The body and the other headers
// of the original message are copied unchanged (except Nats-* headers, which
// belong to the server).
const (
	// HeaderDLQReason is the decoding error (events.InvalidEventError): the
	// invalid field and why. It quotes no personal data (at most ids, enum
	// values, envelope attributes and the subject), has control characters
	// replaced by spaces and is cut to 512 bytes.
	HeaderDLQReason = "Lookup-Dlq-Reason"
	// HeaderOriginalSubject is the subject the event was published on.
	HeaderOriginalSubject = "Lookup-Original-Subject"
	// HeaderOriginalStream is the stream the event was read from.
	HeaderOriginalStream = "Lookup-Original-Stream"
	// HeaderOriginalSequence is its sequence in that stream (decimal).
	HeaderOriginalSequence = "Lookup-Original-Sequence"
	// HeaderOriginalMsgID is the original Nats-Msg-Id, when there was one.
	HeaderOriginalMsgID = "Lookup-Original-Msg-Id"
)

// DLQSubjectPrefix is prepended to the original subject of a dead-lettered
// event.
const DLQSubjectPrefix = "dlq."

// ensureDLQ creates the dead-letter stream if it does not exist.
func (p *Projector) ensureDLQ(ctx context.Context) error {
	p.hooks.ensuringDLQ()
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := p.js.Stream(rctx, p.cfg.DLQStream)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("look up dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	cfg := DLQStreamConfig(p.cfg.DLQStream)
	if p.cfg.Stream != "PERSONS" {
		cfg.Description = strings.Replace(cfg.Description, "PERSONS", p.cfg.Stream, 1)
	}
	_, err = p.js.CreateStream(rctx, cfg)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	p.logger.Info("created dead-letter stream", "dlq_stream", p.cfg.DLQStream)
	return nil
}

// DLQStreamConfig returns the configuration with which the projector creates
// the dead-letter stream name when it is missing: the same as
// deploy/streams/persons_dlq.json (a test keeps them equal), except that the
// file's replica count is for operators to choose. Limits retention, file
// storage with S2 compression, at most a million messages, 1 GiB and 30
// days (the oldest discarded first), messages of at most 1 MiB, a
// two-minute duplicate window, direct gets allowed.
func DLQStreamConfig(name string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              name,
		Description:       "Events of PERSONS that broke contract v1, with the reason, original subject and sequence in headers",
		Subjects:          []string{DLQSubjectPrefix + events.SubjectRoot + ".>"},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      -1,
		MaxMsgs:           1_000_000,
		MaxBytes:          1 << 30,
		MaxAge:            30 * 24 * time.Hour,
		MaxMsgsPerSubject: -1,
		MaxMsgSize:        1 << 20,
		Discard:           jetstream.DiscardOld,
		Storage:           jetstream.FileStorage,
		Replicas:          1,
		Duplicates:        2 * time.Minute,
		AllowDirect:       true,
		Compression:       jetstream.S2Compression,
	}
}

// deadLetter copies an invalid message to the DLQ stream and waits for the
// server's acknowledgement, retrying with backoff until it succeeds or ctx
// is done.
//
// Every replica reads the whole stream, and a replica re-reads events after
// a crash, so the same invalid event is dead-lettered many times over; it
// must land in the DLQ once. Two guards: the Nats-Msg-Id is derived from the
// source stream and sequence, so the DLQ's duplicate window (two minutes by
// default) drops copies published close together; and before publishing,
// the last DLQ message on the same subject is looked up: every projector
// dead-letters in stream order, so if that message comes from this stream at
// this sequence or later, this event is already in the DLQ (until an
// operator purges the DLQ) and is not published again.
func (p *Projector) deadLetter(ctx context.Context, m *msgItem) error {
	reason := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' ' // no control characters (CR, LF) in a header
		}
		return r
	}, m.decErr.Error())
	if len(reason) > 512 {
		reason = strings.ToValidUTF8(reason[:512], "")
	}
	out := nats.NewMsg(DLQSubjectPrefix + m.msg.Subject())
	out.Data = m.msg.Data()
	for k, vs := range m.msg.Headers() {
		if strings.HasPrefix(k, "Nats-") {
			continue
		}
		for _, v := range vs {
			out.Header.Add(k, v)
		}
	}
	if id := m.msg.Headers().Get(jetstream.MsgIDHeader); id != "" {
		out.Header.Set(HeaderOriginalMsgID, id)
	}
	out.Header.Set(HeaderDLQReason, reason)
	out.Header.Set(HeaderOriginalSubject, m.msg.Subject())
	out.Header.Set(HeaderOriginalStream, p.cfg.Stream)
	out.Header.Set(HeaderOriginalSequence, strconv.FormatUint(m.seq, 10))
	msgID := p.cfg.Stream + ":" + strconv.FormatUint(m.seq, 10)

	return retryForever(ctx, func() error {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		present, err := p.inDLQ(pctx, out.Subject, m.seq)
		if err == nil && present {
			p.logger.Debug("invalid event already dead-lettered", "seq", m.seq, "subject", m.msg.Subject())
			return nil
		}
		if err == nil {
			_, err = p.js.PublishMsg(pctx, out, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(p.cfg.DLQStream))
		}
		if err == nil {
			p.logger.Warn("invalid event dead-lettered", "seq", m.seq, "subject", m.msg.Subject(), "reason", reason)
			return nil
		}
		if ctx.Err() == nil && (errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse)) {
			// The DLQ stream was deleted while running: create it again.
			if cerr := p.ensureDLQ(ctx); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
		return err
	}, func(err error, d time.Duration) {
		p.logger.Error("dead-letter publish failed, retrying", "err", err, "seq", m.seq, "retry_in", d)
	})
}

// inDLQ reports whether the last DLQ message on dlqSubject is the copy of
// an event of this stream at sequence seq or later.
func (p *Projector) inDLQ(ctx context.Context, dlqSubject string, seq uint64) (bool, error) {
	dlq, err := p.js.Stream(ctx, p.cfg.DLQStream)
	if err != nil {
		return false, fmt.Errorf("look up dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	last, err := dlq.GetLastMsgForSubject(ctx, dlqSubject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	if last.Header.Get(HeaderOriginalStream) != p.cfg.Stream {
		return false, nil
	}
	got, err := strconv.ParseUint(last.Header.Get(HeaderOriginalSequence), 10, 64)
	return err == nil && got >= seq, nil
}
