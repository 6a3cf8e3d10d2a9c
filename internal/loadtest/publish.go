package loadtest

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// PublishWindow is how many messages PublishBulk has in flight at most:
// give jetstream.New jetstream.WithPublishAsyncMaxPending(PublishWindow).
const PublishWindow = 16000

// PublishBulk publishes the n messages next(0) ... next(n-1) on js
// asynchronously, PublishWindow at a time, and returns the stream sequence
// of the last one. Each window's acknowledgements are awaited before the
// next window is sent; any error stops it. progress, when not nil, is
// called after each window with the count published so far.
func PublishBulk(ctx context.Context, js jetstream.JetStream, n int, next func(i int) (*nats.Msg, error), progress func(done int)) (uint64, error) {
	var last uint64
	futures := make([]jetstream.PubAckFuture, 0, PublishWindow)
	for start := 0; start < n; start += PublishWindow {
		futures = futures[:0]
		for i := start; i < min(start+PublishWindow, n); i++ {
			m, err := next(i)
			if err != nil {
				return last, fmt.Errorf("event %d: %w", i, err)
			}
			f, err := js.PublishMsgAsync(m)
			if err != nil {
				return last, fmt.Errorf("publish event %d: %w", i, err)
			}
			futures = append(futures, f)
		}
		seq, err := awaitAcks(ctx, futures)
		if err != nil {
			return last, err
		}
		last = max(last, seq)
		if progress != nil {
			progress(min(start+PublishWindow, n))
		}
	}
	return last, nil
}

// awaitAcks waits for every future and returns the highest sequence
// acknowledged, or the first error.
func awaitAcks(ctx context.Context, futures []jetstream.PubAckFuture) (uint64, error) {
	var last uint64
	for _, f := range futures {
		select {
		case ack := <-f.Ok():
			last = max(last, ack.Sequence)
		case err := <-f.Err():
			return last, fmt.Errorf("publish %s: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			return last, ctx.Err()
		}
	}
	return last, nil
}

// Paced is what PublishPaced did.
type Paced struct {
	Published uint64        // messages acknowledged
	LastSeq   uint64        // stream sequence of the last one
	Elapsed   time.Duration // from the start to the return
}

// Rate is the rate of the messages acknowledged a second (0 when no time
// passed).
func (p Paced) Rate() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Published) / p.Elapsed.Seconds()
}

// pacedTick is how often PublishPaced sends what is due.
const pacedTick = 50 * time.Millisecond

// PublishPaced publishes messages from next on js at rate a second until
// ctx ends, in an open loop: every pacedTick it sends, asynchronously,
// what is due since it started (rate × elapsed, less what it sent) and
// awaits their acknowledgements. A slow broker makes it fall behind and
// catch up, not slow down. It returns what it published, and the first
// error other than ctx's end.
func PublishPaced(ctx context.Context, js jetstream.JetStream, rate int, next func() (*nats.Msg, error)) (Paced, error) {
	start := time.Now()
	p, err := publishPaced(ctx, js, rate, next, start)
	p.Elapsed = time.Since(start)
	return p, err
}

func publishPaced(ctx context.Context, js jetstream.JetStream, rate int, next func() (*nats.Msg, error), start time.Time) (Paced, error) {
	var p Paced
	t := time.NewTicker(pacedTick)
	defer t.Stop()
	var futures []jetstream.PubAckFuture
	for {
		select {
		case <-ctx.Done():
			return p, nil
		case now := <-t.C:
			due := uint64(float64(rate) * now.Sub(start).Seconds())
			futures = futures[:0]
			for sent := p.Published; sent < due; sent++ {
				m, err := next()
				if err != nil {
					return p, err
				}
				f, err := js.PublishMsgAsync(m)
				if err != nil {
					return p, fmt.Errorf("publish: %w", err)
				}
				futures = append(futures, f)
			}
			seq, err := awaitAcks(ctx, futures)
			if err != nil {
				if ctx.Err() != nil {
					return p, nil
				}
				return p, err
			}
			p.Published += uint64(len(futures))
			p.LastSeq = max(p.LastSeq, seq)
		}
	}
}
