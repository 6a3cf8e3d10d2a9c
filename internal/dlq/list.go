package dlq

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// fetchWait bounds how long List waits for the next batch of headers.
const fetchWait = 5 * time.Second

// List calls fn with each dead letter, oldest first, as the stream stands
// when List starts (letters added meanwhile may or may not be listed). It
// reads headers only. It stops at the first error of fn and returns it.
func (t *Tool) List(ctx context.Context, fn func(Letter) error) error {
	s, err := t.streamHandle(ctx)
	if err != nil {
		return err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("dead-letter stream %q: %w", t.stream, err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	last, remaining := info.State.LastSeq, info.State.Msgs
	c, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverAllPolicy,
		HeadersOnly:   true,
	})
	if err != nil {
		return fmt.Errorf("dead-letter stream %q: consumer: %w", t.stream, err)
	}
	for {
		msgs, err := fetch(ctx, c, int(min(remaining, 256)))
		if err != nil {
			return fmt.Errorf("dead-letter stream %q: fetch: %w", t.stream, err)
		}
		if len(msgs) == 0 {
			return nil // nothing more within fetchWait: the rest was deleted meanwhile
		}
		for _, m := range msgs {
			remaining = max(remaining, 2) - 1
			md, err := m.Metadata()
			if err != nil {
				return fmt.Errorf("dead-letter stream %q: %w", t.stream, err)
			}
			size, _ := strconv.Atoi(m.Headers().Get(nats.MsgSize))
			if err := fn(letterOf(md.Sequence.Stream, m.Subject(), md.Timestamp, m.Headers(), size)); err != nil {
				return err
			}
			if md.Sequence.Stream >= last || md.NumPending == 0 {
				return nil
			}
		}
	}
}

// fetch returns the next batch of at most n of c's messages, waiting at
// most fetchWait for all n: fewer (none, and no error) when there were
// fewer to get.
func fetch(ctx context.Context, c jetstream.Consumer, n int) ([]jetstream.Msg, error) {
	fctx, cancel := context.WithTimeout(ctx, fetchWait)
	defer cancel()
	batch, err := c.Fetch(n, jetstream.FetchContext(fctx))
	if err != nil {
		return nil, err
	}
	var msgs []jetstream.Msg
	for m := range batch.Messages() {
		msgs = append(msgs, m)
	}
	if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) &&
		!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
		return msgs, err
	}
	return msgs, ctx.Err()
}

// Origin names where l came from: "PERSONS:42", or "-" when unknown.
func (l Letter) Origin() string {
	if l.Stream == "" {
		return "-"
	}
	return l.Stream + ":" + strconv.FormatUint(l.OrigSeq, 10)
}
