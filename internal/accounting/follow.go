package accounting

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lookup/persons/projector"
	"github.com/nats-io/nats.go/jetstream"
)

// maxApply bounds the messages applied in one transaction.
const maxApply = 256

// Follow applies the messages of the audit stream after the index's
// position, as they come, until ctx is done (it then returns nil). It
// first holds the index to the stream (bindStream: an index of another
// stream, or of the stream before it was deleted and created again, is
// emptied, to be rebuilt from this one). It reads
// through an ordered consumer (no state kept on the server), and applies
// what has arrived together, up to maxApply messages a transaction.
func (x *Index) Follow(ctx context.Context, js jetstream.JetStream, stream string) error {
	return x.follow(ctx, js, stream, nil)
}

// observer is told what a follow learns: the stream's last sequence
// (streamLast, 0 when not known), the time of its first message (first)
// and the sequence applied, at the start
// and after each commit; pending is the number of messages the stream
// holds beyond applied as the server last counted them (0: caught up).
type observer interface {
	connected(applied, streamLast uint64, first time.Time)
	committed(applied, pending uint64)
}

// follow is Follow, telling obs (when not nil) its progress. Stopped at
// any step, it returns nil, as Follow says, not the error the cancelled
// step gave.
func (x *Index) follow(ctx context.Context, js jetstream.JetStream, stream string, obs observer) error {
	if err := x.followFrom(ctx, js, stream, obs); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// followFrom is follow, returning what stopped it.
func (x *Index) followFrom(ctx context.Context, js jetstream.JetStream, stream string, obs observer) error {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", stream, err)
	}
	id, err := projector.LookUpStream(ctx, js, stream)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", stream, err)
	}
	if err := x.bindStream(id, s.CachedInfo().State.LastSeq); err != nil {
		return err
	}
	pos, err := x.Position()
	if err != nil {
		return err
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: pos + 1})
	if err != nil {
		return fmt.Errorf("follow audit stream %q: %w", stream, err)
	}
	if obs != nil {
		st := s.CachedInfo().State
		obs.connected(pos, st.LastSeq, st.FirstTime)
	}
	it, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("follow audit stream %q: %w", stream, err)
	}
	defer it.Stop()
	return x.applyFrom(ctx, it, &streamWatch{js: js, name: stream, id: id}, obs)
}

// streamCheck is how long following waits for a message before it checks
// that the stream is still there and the one the index is bound to.
var streamCheck = 2 * time.Second

// applyFrom applies what it brings, up to maxApply messages a
// transaction, until ctx is done (nil) or it fails, or w finds the stream
// gone or replaced: then the follow ends, and the next one, from Follow's
// caller, rebinds the index (bindStream).
func (x *Index) applyFrom(ctx context.Context, it jetstream.MessagesContext, w *streamWatch, obs observer) error {
	batch := make([]Message, 0, maxApply)
	for {
		wctx, cancel := context.WithTimeout(ctx, streamCheck)
		msg, err := it.Next(jetstream.NextContext(wctx))
		cancel()
		switch {
		case ctx.Err() != nil:
			return nil //nolint:nilerr // stopped: the follow ends without error whatever Next said
		case errors.Is(err, context.DeadlineExceeded):
			if err := w.check(ctx); err != nil {
				return err
			}
			continue
		case err != nil:
			return fmt.Errorf("follow audit stream %q: %w", w.name, err)
		}
		m, pending, reset := w.toMessage(msg)
		batch = append(batch[:0], m)
		// What has arrived meanwhile goes in the same transaction.
		for len(batch) < maxApply {
			msg, err := it.Next(jetstream.NextMaxWait(time.Millisecond))
			if err != nil {
				break // nothing more yet (or an error the next Next reports)
			}
			var r bool
			m, pending, r = w.toMessage(msg)
			batch, reset = append(batch, m), reset || r
		}
		if reset { // the ordered consumer was (re)created: on the same stream?
			if err := w.check(ctx); err != nil {
				return err
			}
		}
		if err := x.Apply(batch); err != nil {
			return err
		}
		if obs != nil {
			obs.committed(batch[len(batch)-1].StreamSeq, pending)
		}
	}
}

// streamWatch tells whether the stream followed is still the incarnation
// the index is bound to: a stream deleted and created again under the
// follow goes unnoticed by the ordered consumer, which recreates itself on
// the new stream (and delivers its messages after the index's position,
// if it has that many).
type streamWatch struct {
	js       jetstream.JetStream
	name     string
	id       projector.StreamIdentity
	lastCSeq uint64 // the consumer sequence of the last message
}

// check returns an error when the stream is gone or is another.
func (w *streamWatch) check(ctx context.Context) error {
	id, err := projector.LookUpStream(ctx, w.js, w.name)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", w.name, err)
	}
	if why := otherStream(w.id, id); why != "" {
		return fmt.Errorf("audit stream %q: %s: following it again", w.name, why)
	}
	return nil
}

// toMessage returns msg as a Message to apply, the number of messages
// the server said were pending after it, and whether its consumer
// sequence does not follow on from the previous message's (the first of
// a follow, or the ordered consumer recreated).
func (w *streamWatch) toMessage(msg jetstream.Msg) (Message, uint64, bool) {
	m := Message{Subject: msg.Subject(), Data: msg.Data()}
	meta, err := msg.Metadata()
	if err != nil {
		return m, 0, true
	}
	m.StreamSeq = meta.Sequence.Stream
	reset := w.lastCSeq == 0 || meta.Sequence.Consumer != w.lastCSeq+1
	w.lastCSeq = meta.Sequence.Consumer
	return m, meta.NumPending, reset
}
