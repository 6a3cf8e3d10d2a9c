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
		batch = append(batch[:0], toMessage(msg))
		// What has arrived meanwhile goes in the same transaction.
		for len(batch) < maxApply {
			msg, err := it.Next(jetstream.NextMaxWait(time.Millisecond))
			if err != nil {
				break // nothing more yet (or an error the next Next reports)
			}
			batch = append(batch, toMessage(msg))
		}
		if err := x.Apply(batch); err != nil {
			return err
		}
	}
}

// toMessage returns msg as a Message to apply.
func toMessage(msg jetstream.Msg) Message {
	m := Message{Subject: msg.Subject(), Data: msg.Data()}
	if meta, err := msg.Metadata(); err == nil {
		m.StreamSeq = meta.Sequence.Stream
	}
	return m
}
