package soak

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/fixtures"
)

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
			seq, err := fixtures.AwaitAcks(ctx, futures)
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
