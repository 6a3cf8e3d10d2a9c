// Package dlq inspects and replays the dead-letter stream that the
// projector fills (PERSONS_DLQ; see projector.HeaderDLQReason and the
// decision record 0007): the operator's tools behind "lookupd dlq".
//
// Listing reads headers only (a headers-only ordered consumer): the body of
// a dead letter, which may hold personal data, never leaves the server.
// Replaying republishes the original body, with its headers, on its
// original subject in its original stream, and deletes the dead letter only
// once the republish is acknowledged.
package dlq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/projector"
)

// DefaultStream is the dead-letter stream of the projector.
const DefaultStream = "PERSONS_DLQ"

// HeaderReplayOf is set on a republished event: the stream and sequence of
// the event it repeats ("PERSONS:42"), for audit. Decoding ignores it.
const HeaderReplayOf = "Lookup-Replay-Of"

// Letter is what the listing shows of one dead letter: where it is, where
// it came from and why it was refused, never its body.
type Letter struct {
	Seq     uint64    `json:"seq"`              // sequence in the dead-letter stream
	Time    time.Time `json:"time"`             // when it was dead-lettered
	Subject string    `json:"subject"`          // original subject
	Stream  string    `json:"stream,omitempty"` // original stream
	OrigSeq uint64    `json:"original_seq,omitempty"`
	MsgID   string    `json:"msg_id,omitempty"` // original Nats-Msg-Id (the event id)
	Reason  string    `json:"reason"`           // the decoding error; no personal data
	Size    int       `json:"size"`             // body size in bytes
}

// Config configures a Tool. Zero fields take their defaults.
type Config struct {
	// Stream is the dead-letter stream. Default DefaultStream.
	Stream string
}

// Tool lists and replays the dead letters of one dead-letter stream.
type Tool struct {
	js     jetstream.JetStream
	stream string
}

// New returns the Tool of cfg.Stream, reached through js.
func New(js jetstream.JetStream, cfg Config) *Tool {
	if cfg.Stream == "" {
		cfg.Stream = DefaultStream
	}
	return &Tool{js: js, stream: cfg.Stream}
}

// letterOf reads a Letter from the headers of a dead letter stored at seq
// on subject (the dead-letter subject) at time ts, with a body of size
// bytes. A message that lacks the original subject header is placed by its
// own subject without the dead-letter prefix.
func letterOf(seq uint64, subject string, ts time.Time, h nats.Header, size int) Letter {
	l := Letter{
		Seq:     seq,
		Time:    ts.UTC(),
		Subject: h.Get(projector.HeaderOriginalSubject),
		Stream:  h.Get(projector.HeaderOriginalStream),
		MsgID:   h.Get(projector.HeaderOriginalMsgID),
		Reason:  h.Get(projector.HeaderDLQReason),
		Size:    size,
	}
	if l.Subject == "" {
		l.Subject = strings.TrimPrefix(subject, projector.DLQSubjectPrefix)
	}
	l.OrigSeq, _ = strconv.ParseUint(h.Get(projector.HeaderOriginalSequence), 10, 64)
	return l
}

// streamHandle returns the dead-letter stream, with an error that names it.
func (t *Tool) streamHandle(ctx context.Context) (jetstream.Stream, error) {
	s, err := t.js.Stream(ctx, t.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil, fmt.Errorf("dead-letter stream %q does not exist (no event has been dead-lettered yet): %w", t.stream, err)
	}
	if err != nil {
		return nil, fmt.Errorf("dead-letter stream %q: %w", t.stream, err)
	}
	return s, nil
}

// validSubject reports whether subject is one the projector reads, so
// that a replay never publishes outside the event contract's subjects.
func validSubject(subject string) bool {
	return strings.HasPrefix(subject, events.SubjectRoot+".")
}
