package ledger

import (
	"context"
	"fmt"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// stored is a message of the audit stream as read back.
type stored struct {
	streamSeq uint64
	subject   string
	header    nats.Header
	data      []byte
}

// readAll calls fn with each message of stream, as the stream holds them when the call starts, in stream order,
// and returns fn's first error. It reads through an ordered consumer (no
// state kept on the server).
func readAll(ctx context.Context, js jetstream.JetStream, stream string, fn func(m stored) error) error {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", stream, err)
	}
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy})
	if err != nil {
		return fmt.Errorf("read audit stream %q: %w", stream, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return fmt.Errorf("read audit stream %q: %w", stream, err)
	}
	for left := info.NumPending; left > 0; {
		batch, err := cons.Fetch(int(min(left, 1000)), jetstream.FetchContext(ctx))
		if err != nil {
			return fmt.Errorf("read audit stream %q: %w", stream, err)
		}
		for msg := range batch.Messages() {
			meta, err := msg.Metadata()
			if err != nil {
				return fmt.Errorf("read audit stream %q: %w", stream, err)
			}
			if err := fn(stored{streamSeq: meta.Sequence.Stream, subject: msg.Subject(), header: msg.Headers(), data: msg.Data()}); err != nil {
				return err
			}
			left = meta.NumPending
		}
		if err := batch.Error(); err != nil {
			return fmt.Errorf("read audit stream %q: %w", stream, err)
		}
	}
	return nil
}

// records returns the records m holds: those of a format 2 or 3 message
// (one per disclosed person), or a format 1 record.
func (m stored) records() ([]Record, error) {
	if strings.HasPrefix(m.subject, ReplicaSubjectPrefix) {
		msg, err := decodeMessage(m.data)
		if err != nil {
			return nil, err
		}
		return recordsOf(m.subject, msg), nil
	}
	r, err := decodeRecord(m.data)
	if err != nil {
		return nil, err
	}
	return []Record{r}, nil
}

// RecordsOf returns the records of the message data stored on subject in
// the audit stream, of either format, each with where it is stored: what
// a projection of the stream (internal/accounting) indexes.
func RecordsOf(subject string, data []byte) ([]Record, error) {
	return stored{subject: subject, data: data}.records()
}
