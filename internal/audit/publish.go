package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// errNotConnected fails the records of a batch while NATS is unreachable.
var errNotConnected = errors.New("audit: NATS not connected")

// maxBatch bounds the records published as one batch.
const maxBatch = 256

// chain is the state of the Ledger's hash chain; only publish touches it.
type chain struct {
	id   string
	seq  uint64
	prev string
}

func newChain() chain { return chain{id: uuid.NewString()} }

// publish is the one goroutine that chains records and stores them: it
// takes every disclosure queued (up to maxBatch records), stores them as
// one batch, waits for JetStream's acknowledgement and reports to each
// disclosure; meanwhile the next ones queue up. So concurrent disclosures
// share one round trip, and no record is published before the ones
// chained ahead of it are stored: when a batch fails, the chain ends at
// the last record stored and the next batch starts a new chain, so that a
// failure never looks like a gap to Verify.
func (l *Ledger) publish() {
	defer close(l.done)
	defer l.batches.close()
	c := newChain()
	for {
		batch := l.collect()
		if batch == nil {
			return
		}
		n := 0
		for _, p := range batch {
			n += p.records()
		}
		err := l.store(&c, batch)
		if err != nil {
			c = newChain()
			l.failed(n, err)
		} else {
			l.metrics.records.WithLabelValues("stored").Add(float64(n))
		}
		for _, p := range batch {
			p.done <- err
		}
	}
}

// collect waits for a disclosure, then takes those queued behind it, up
// to maxBatch records. It returns nil once the Ledger is closed and its
// queue drained.
func (l *Ledger) collect() []*pending {
	var first *pending
	select {
	case first = <-l.queue:
	case <-l.closing:
		select {
		case first = <-l.queue:
		default:
			return nil
		}
	}
	batch, n := []*pending{first}, first.records()
	for n < maxBatch {
		select {
		case p := <-l.queue:
			batch = append(batch, p)
			n += p.records()
			continue
		default:
		}
		break
	}
	return batch
}

// store chains the records of batch and stores them: as one fast batch
// when the stream allows it (one acknowledgement for all), else each
// published asynchronously. (JetStream's atomic batches would need one
// acknowledgement too, but a one-replica file stream stages each of them
// in a file store of its own, synced: slower than the acknowledgements.)
func (l *Ledger) store(c *chain, batch []*pending) error {
	// Disconnected, a publish would wait in the reconnect buffer and be
	// stored after the caller was refused: fail at once instead.
	if !l.nc.IsConnected() {
		return errNotConnected
	}
	if !l.ensured.Load() {
		if err := l.ensure(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.AckTimeout)
	defer cancel()
	if l.batches != nil && l.batched.Load() {
		// PublishMsg has copied each message into the connection's buffer
		// by the time it returns, so the outbox is reused batch after batch.
		return l.batches.store(ctx, l.out.fill(c, l.cfg.Replica, batch))
	}
	// PublishMsgAsync keeps its messages (it may publish them again), so
	// they get an outbox of their own.
	return l.storeEach(ctx, new(outbox).fill(c, l.cfg.Replica, batch))
}

// storeEach publishes msgs asynchronously and waits for every
// acknowledgement; a record not acknowledged is published again once (its
// message id makes that idempotent).
func (l *Ledger) storeEach(ctx context.Context, msgs []*nats.Msg) error {
	futs := make([]jetstream.PubAckFuture, len(msgs))
	for i, m := range msgs {
		f, err := l.js.PublishMsgAsync(m)
		if err != nil {
			return fmt.Errorf("audit: publish: %w", err)
		}
		futs[i] = f
	}
	var errs []error
	for i, f := range futs {
		select {
		case <-f.Ok():
			continue
		case err := <-f.Err():
			if errors.Is(err, jetstream.ErrNoStreamResponse) || errors.Is(err, nats.ErrNoResponders) {
				errs = append(errs, err) // no stream takes the subject: a retry fails too
				continue
			}
		case <-ctx.Done():
		}
		if _, err := l.js.PublishMsg(ctx, msgs[i]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("audit: %d of %d records not stored: %w", len(errs), len(msgs), errs[0])
	}
	return nil
}

// ensure creates the audit stream if it is missing, and notes whether it
// allows fast batch publishing.
func (l *Ledger) ensure() error {
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.AckTimeout)
	defer cancel()
	if err := EnsureStream(ctx, l.js, l.cfg.Stream); err != nil {
		return err
	}
	s, err := l.js.Stream(ctx, l.cfg.Stream)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", l.cfg.Stream, err)
	}
	l.batched.Store(s.CachedInfo().Config.AllowBatchPublish)
	l.ensured.Store(true)
	return nil
}
