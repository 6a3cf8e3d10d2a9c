package accounting

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// maxApply bounds the messages applied in one transaction.
const maxApply = 256

// Follow applies the messages of the audit stream after the index's
// position, as they come, until ctx is done (it then returns nil). It reads
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
	pos, err := x.Position()
	if err != nil {
		return err
	}
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", stream, err)
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
	batch := make([]Message, 0, maxApply)
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return fmt.Errorf("follow audit stream %q: %w", stream, err)
		}
		m, pending := toMessage(msg)
		batch = append(batch[:0], m)
		// What has arrived meanwhile goes in the same transaction.
		for len(batch) < maxApply {
			msg, err := it.Next(jetstream.NextMaxWait(time.Millisecond))
			if err != nil {
				break // nothing more yet (or an error the next Next reports)
			}
			m, pending = toMessage(msg)
			batch = append(batch, m)
		}
		if err := x.Apply(batch); err != nil {
			return err
		}
		if obs != nil {
			obs.committed(batch[len(batch)-1].StreamSeq, pending)
		}
	}
}

// toMessage returns msg as a Message to apply, and the number of messages
// the server said were pending after it.
func toMessage(msg jetstream.Msg) (Message, uint64) {
	m := Message{Subject: msg.Subject(), Data: msg.Data()}
	var pending uint64
	if meta, err := msg.Metadata(); err == nil {
		m.StreamSeq, pending = meta.Sequence.Stream, meta.NumPending
	}
	return m, pending
}
