package dlq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/projector"
)

// Result is what became of one dead letter in a replay.
type Result int

const (
	// Replayed: republished (acknowledged) and removed from the DLQ.
	Replayed Result = iota + 1
	// AlreadyReplayed: an earlier replay of the same event had been
	// acknowledged (the stream dropped this one as a duplicate of it);
	// removed from the DLQ.
	AlreadyReplayed
	// StillInvalid: this build's decoder still refuses the event; left in
	// the DLQ, not republished (Force republishes it anyway).
	StillInvalid
)

func (r Result) String() string {
	switch r {
	case Replayed:
		return "replayed"
	case AlreadyReplayed:
		return "already-replayed"
	case StillInvalid:
		return "still-invalid"
	}
	return "unknown"
}

// Outcome is the result of replaying one dead letter.
type Outcome struct {
	Letter
	Result Result
	// NewSeq is the sequence of the republished event in its stream.
	NewSeq uint64
	// Problem is why the event is still invalid (StillInvalid); no
	// personal data.
	Problem string
}

// ReplayOptions tune a replay.
type ReplayOptions struct {
	// Force republishes events that this build's decoder still refuses
	// (they will be dead-lettered again unless the projector's decoder
	// differs).
	Force bool
}

// ErrNotFound is returned (wrapped) by Replay when no dead letter has the
// sequence.
var ErrNotFound = errors.New("no such dead letter")

// Replay republishes the dead letter at seq and removes it from the DLQ
// once the republish is acknowledged (see the package comment).
//
// The republished message carries the original body and headers (the
// dead-letter headers and the server's Nats-* headers removed), plus
// HeaderReplayOf. Its Nats-Msg-Id is not the original one, which the
// stream may still hold inside its duplicate window (a replay soon after
// the fix would be dropped as a duplicate of the very event that failed):
// it is "replay:" + original stream + ":" + original sequence, so that a
// replay retried after a crash between the acknowledgement and the
// deletion is dropped as a duplicate of the first replay (AlreadyReplayed).
// The projector applies a replayed event like any other: an event older
// than what the read model holds for its entity is skipped as stale.
//
// It fails with an error matching ErrNotFound when no dead letter has seq,
// and returns StillInvalid (and no error) when the event still does not
// decode, unless opts.Force.
func (t *Tool) Replay(ctx context.Context, seq uint64, opts ReplayOptions) (Outcome, error) {
	s, err := t.streamHandle(ctx)
	if err != nil {
		return Outcome{}, err
	}
	return t.replay(ctx, s, seq, opts)
}

func (t *Tool) replay(ctx context.Context, s jetstream.Stream, seq uint64, opts ReplayOptions) (Outcome, error) {
	raw, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return Outcome{}, fmt.Errorf("%w at sequence %d of %q", ErrNotFound, seq, t.stream)
	}
	if err != nil {
		return Outcome{}, fmt.Errorf("get dead letter %d of %q: %w", seq, t.stream, err)
	}
	out := Outcome{Letter: letterOf(raw.Sequence, raw.Subject, raw.Time, raw.Header, len(raw.Data))}
	if !validSubject(out.Subject) {
		return out, fmt.Errorf("dead letter %d: original subject %q is not a subject of the event contract (%s.>)", seq, out.Subject, events.SubjectRoot)
	}
	if _, err := events.DecodeMsg(out.Subject, raw.Header, raw.Data); err != nil && !opts.Force {
		out.Result, out.Problem = StillInvalid, err.Error()
		return out, nil
	}
	msg, pubOpts := republication(t.stream, out.Letter, raw)
	ack, err := t.js.PublishMsg(ctx, msg, pubOpts...)
	if err != nil {
		return out, fmt.Errorf("dead letter %d: republish on %s: %w (left in the DLQ)", seq, out.Subject, err)
	}
	out.Result, out.NewSeq = Replayed, ack.Sequence
	if ack.Duplicate {
		out.Result = AlreadyReplayed
	}
	if err := s.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		return out, fmt.Errorf("dead letter %d: republished as %s sequence %d, but not removed from the DLQ: %w", seq, ack.Stream, ack.Sequence, err)
	}
	return out, nil
}

// republication returns the message that replays the dead letter l (raw)
// of the dead-letter stream dlqStream, and its publish options.
func republication(dlqStream string, l Letter, raw *jetstream.RawStreamMsg) (*nats.Msg, []jetstream.PublishOpt) {
	msg := nats.NewMsg(l.Subject)
	msg.Data = raw.Data
	for k, vs := range raw.Header {
		if strings.HasPrefix(k, "Nats-") || deadLetterHeader(k) {
			continue
		}
		for _, v := range vs {
			msg.Header.Add(k, v)
		}
	}
	origin := dlqStream + ":" + strconv.FormatUint(l.Seq, 10)
	if l.Stream != "" && l.OrigSeq != 0 {
		origin = l.Stream + ":" + strconv.FormatUint(l.OrigSeq, 10)
	}
	msg.Header.Set(HeaderReplayOf, origin)
	opts := []jetstream.PublishOpt{jetstream.WithMsgID("replay:" + origin)}
	if l.Stream != "" {
		opts = append(opts, jetstream.WithExpectStream(l.Stream))
	}
	return msg, opts
}

// deadLetterHeader reports whether the header key was added by the
// projector when it dead-lettered the event.
func deadLetterHeader(key string) bool {
	switch key {
	case projector.HeaderDLQReason, projector.HeaderOriginalSubject, projector.HeaderOriginalStream,
		projector.HeaderOriginalSequence, projector.HeaderOriginalMsgID:
		return true
	}
	return false
}

// ReplayAll replays every dead letter, oldest first, as the stream stands
// when it starts, calling fn with each outcome. Events that still do not
// decode are left in the DLQ (see ReplayOptions.Force) and the replay goes
// on; it stops at the first error (a republish or deletion that failed).
func (t *Tool) ReplayAll(ctx context.Context, opts ReplayOptions, fn func(Outcome)) error {
	s, err := t.streamHandle(ctx)
	if err != nil {
		return err
	}
	var seqs []uint64
	if err := t.List(ctx, func(l Letter) error { seqs = append(seqs, l.Seq); return nil }); err != nil {
		return err
	}
	for _, seq := range seqs {
		out, err := t.replay(ctx, s, seq, opts)
		if errors.Is(err, ErrNotFound) {
			continue // removed meanwhile (another replay, the age limit)
		}
		if err != nil {
			return err
		}
		fn(out)
	}
	return nil
}

// ParseSeqs returns the dead-letter sequences in list (comma-separated
// positive integers, blanks around them ignored), in order, for replay's
// --seq. Its error quotes the first item that is not one.
func ParseSeqs(list string) ([]uint64, error) {
	var seqs []uint64
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("want a positive sequence number, got %q", f)
		}
		seqs = append(seqs, n)
	}
	return seqs, nil
}
