package audit

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// stored is one message of the audit stream.
type stored struct {
	streamSeq uint64
	data      []byte
}

// readAll returns the messages of stream on subject filter ("" = all), as
// the stream holds them when the call starts, in stream order. It reads
// through an ordered consumer (no state kept on the server).
func readAll(ctx context.Context, js jetstream.JetStream, stream, filter string) ([]stored, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("audit stream %q: %w", stream, err)
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("read audit stream %q: %w", stream, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("read audit stream %q: %w", stream, err)
	}
	left := info.NumPending
	out := make([]stored, 0, left)
	for left > 0 {
		batch, err := cons.Fetch(int(min(left, 1000)), jetstream.FetchContext(ctx))
		if err != nil {
			return nil, fmt.Errorf("read audit stream %q: %w", stream, err)
		}
		for msg := range batch.Messages() {
			meta, err := msg.Metadata()
			if err != nil {
				return nil, fmt.Errorf("read audit stream %q: %w", stream, err)
			}
			out = append(out, stored{streamSeq: meta.Sequence.Stream, data: msg.Data()})
			left = meta.NumPending
		}
		if err := batch.Error(); err != nil {
			return nil, fmt.Errorf("read audit stream %q: %w", stream, err)
		}
	}
	return out, nil
}
