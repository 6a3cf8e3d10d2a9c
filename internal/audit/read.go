package audit

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// readAll calls fn with each message of stream on subject filter ("" =
// all), as the stream holds them when the call starts, in stream order,
// and returns fn's first error. It reads through an ordered consumer (no
// state kept on the server).
func readAll(ctx context.Context, js jetstream.JetStream, stream, filter string, fn func(streamSeq uint64, data []byte) error) error {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", stream, err)
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	cons, err := s.OrderedConsumer(ctx, cfg)
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
			if err := fn(meta.Sequence.Stream, msg.Data()); err != nil {
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
