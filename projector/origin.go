package projector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// ErrUnsupportedStream is returned (wrapped, naming the stream and why) by
// Run and LookUpStream when the stream does not hold its origin's events
// under the origin's sequences: a stream that sources other streams (it
// numbers what it copies anew, so a position taken in the origin would mean
// another event in it), or a mirror that filters or transforms subjects
// (it holds only a part of the origin). Rebuilding does not help: project
// from the origin or from a whole mirror of it (docs/decisions/0021-origin-identity.md).
var ErrUnsupportedStream = errors.New("stream does not carry its origin's sequences")

// origin describes the stream a projector reads in terms of the origin it
// carries: the stream itself, or the stream it mirrors.
type origin struct {
	// id is the origin's identity as seen from the stream read: for a
	// mirror, the mirrored stream's name and no creation time (a mirror's
	// information does not give it).
	id streamIdentity
	// mirror is the name of the stream read when it is a mirror, else "".
	mirror string
}

// through names the mirror the origin is read through, if any.
func (o origin) through() string {
	if o.mirror == "" {
		return ""
	}
	return fmt.Sprintf(" through its mirror %q", o.mirror)
}

// originOf returns the origin carried by the stream described by info, or
// an error wrapping ErrUnsupportedStream.
func originOf(info *jetstream.StreamInfo) (origin, error) {
	cfg := info.Config
	switch m := cfg.Mirror; {
	case len(cfg.Sources) > 0:
		return origin{}, fmt.Errorf("%w: stream %q sources other streams and numbers their events anew; project from the origin or a mirror of it",
			ErrUnsupportedStream, cfg.Name)
	case m == nil:
		return origin{id: streamIdentity{name: cfg.Name, created: info.Created}}, nil
	case m.FilterSubject != "" || len(m.SubjectTransforms) > 0:
		return origin{}, fmt.Errorf("%w: stream %q mirrors only part of %q (a subject filter or transform); mirror the whole stream",
			ErrUnsupportedStream, cfg.Name, m.Name)
	default:
		return origin{id: streamIdentity{name: m.Name}, mirror: cfg.Name}, nil
	}
}

// messageTimeFunc returns the stream time of the message at seq in the
// stream read; jetstream.ErrMsgNotFound when it holds none.
type messageTimeFunc func(ctx context.Context, seq uint64) (time.Time, error)

// streamMessageTime reads message times from stream.
func streamMessageTime(stream jetstream.Stream) messageTimeFunc {
	return func(ctx context.Context, seq uint64) (time.Time, error) {
		msg, err := stream.GetMsg(ctx, seq)
		if err != nil {
			return time.Time{}, err
		}
		return msg.Time, nil
	}
}

// errOriginUnverified marks a comparison that could not be made (the
// stream could not be read): not a mismatch, the caller retries.
var errOriginUnverified = errors.New("origin not verified")

// sameOrigin returns "" when a model (or snapshot) recorded as rec, at
// position pos whose event has stream time posTime, belongs to the origin
// found, else why not. When both creation times are known they decide.
// When one is not (one side only ever saw a mirror of the origin), the
// event at pos decides: a mirror keeps the origin's sequences and stream
// times, so the stream read must hold, at pos, an event of exactly
// posTime (to the nanosecond); another incarnation of the origin, or
// another stream of the same name, does not. A position 0 has nothing to
// compare and matches. An error wrapping errOriginUnverified is returned
// when the stream could not be read.
func sameOrigin(ctx context.Context, rec streamIdentity, pos uint64, posTime time.Time, found streamIdentity,
	msgTime messageTimeFunc) (string, error) {
	switch {
	case rec.name != found.name:
		return "another stream", nil
	case !rec.created.IsZero() && !found.created.IsZero():
		if !rec.equal(found) {
			return "another incarnation of the stream", nil
		}
		return "", nil
	case pos == 0:
		return "", nil
	case posTime.IsZero():
		return fmt.Sprintf("the time of event %d is not recorded, so it cannot be matched", pos), nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	t, err := msgTime(rctx, pos)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return fmt.Sprintf("the stream read no longer holds event %d, so it cannot be matched", pos), nil
	case err != nil:
		return "", fmt.Errorf("%w: read the event at sequence %d: %w", errOriginUnverified, pos, err)
	case !t.Equal(posTime):
		return fmt.Sprintf("event %d was published at %s, the stream read holds at %d an event of %s: another incarnation or another origin",
			pos, posTime.UTC().Format(time.RFC3339Nano), pos, t.UTC().Format(time.RFC3339Nano)), nil
	}
	return "", nil
}

// richer returns whichever of a and b (the same origin) knows the origin's
// creation time, a when both do.
func richer(a, b streamIdentity) streamIdentity {
	if a.created.IsZero() && !b.created.IsZero() {
		return b
	}
	return a
}
