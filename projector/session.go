package projector

import (
	"context"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/nats-io/nats.go/jetstream"
)

// msgItem is what the reader goroutine hands the applier: a message (decoded
// or not) or the error that ended the reading.
type msgItem struct {
	item
	pending uint64 // messages pending after this one, per the server
	cseq    uint64 // consumer sequence: restarts at 1 when the ordered consumer is recreated
	msg     jetstream.Msg
	decErr  error // non-nil: invalid event, to be dead-lettered
	err     error // non-nil: the consumer failed; the session ends
}

// session consumes from checkpoint + 1 until the consumer fails or ctx is done.
//
// The pipeline (see startPipeline): a reader goroutine takes messages from
// the consumer; a chunker groups what has arrived into chunks of up to
// chunkSize; decoders (one per CPU) parse the metadata and decode the events
// of each chunk in parallel; the session goroutine takes the chunks in
// stream order, waits for each to be decoded, and commits batches of up to
// BatchSize events.
func (p *Projector) session(ctx context.Context, stream jetstream.Stream, bo *backoff.ExponentialBackOff) error {
	p.mu.Lock()
	start := p.prog.AppliedSeq + 1
	p.mu.Unlock()
	iter, err := p.openConsumer(ctx, stream, start)
	if err != nil {
		return err
	}
	p.logger.Info("consuming", "from_seq", start)
	ordered, stop := p.startPipeline(iter)
	defer stop()

	batch := make([]msgItem, 0, p.cfg.BatchSize)
	lastSeen := start - 1
	var lastCSeq uint64
	for {
		clear(batch)
		var c *chunk
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.streamGone:
			return fmt.Errorf("stream %q no longer found", p.cfg.Stream)
		case c = <-ordered:
		}
		if !p.held(ctx) {
			return ctx.Err()
		}
		var readErr error
		batch, readErr = p.gatherChunks(c, ordered, batch[:0])
		for rest := batch; len(rest) > 0; {
			n := min(len(rest), p.cfg.BatchSize)
			if err := p.checkNotReplaced(ctx, rest[:n], &lastCSeq); err != nil {
				return err
			}
			if err := p.commitBatch(ctx, rest[:n], &lastSeen); err != nil {
				return err
			}
			if err := p.finishRebuild(ctx, rest[n-1].pending); err != nil {
				return err
			}
			rest = rest[n:]
			bo.Reset()
		}
		if readErr != nil {
			return readErr
		}
	}
}

// openConsumer creates the ordered consumer from sequence start and starts
// consuming; it marks the projector caught up if nothing is pending.
func (p *Projector) openConsumer(ctx context.Context, stream jetstream.Stream, start uint64) (jetstream.MessagesContext, error) {
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	cons, err := stream.OrderedConsumer(cctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   start,
		// The client recreates the consumer by itself a few times (about
		// 25 s of backoff); after that the session ends and Run takes over:
		// it checks that the stream exists and recreates the consumer from
		// the checkpoint, with its own backoff, forever.
		MaxResetAttempts: p.resetAttempts,
	})
	cancel()
	if err != nil {
		return nil, fmt.Errorf("create ordered consumer from sequence %d: %w", start, err)
	}
	iter, err := cons.Messages(jetstream.PullMaxMessages(p.pullMax))
	if err != nil {
		return nil, fmt.Errorf("consume from sequence %d: %w", start, err)
	}
	if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
		// Nothing left to deliver after the checkpoint (the stream's last
		// messages may have been deleted): caught up.
		if err := p.finishRebuild(ctx, 0); err != nil {
			iter.Stop()
			return nil, err
		}
		p.markCaughtUp()
	}
	return iter, nil
}

// finishRebuild makes the signer sets that the writer of a store found
// empty has deferred (Store.finishSets) once it has caught up: nothing
// pending after its last batch, or the caught-up target reached. Until
// then markCaughtUp waits for it. It runs on the writer's goroutine and
// retries until the sets are made or ctx is done.
func (p *Projector) finishRebuild(ctx context.Context, pending uint64) error {
	if !p.store.setsDeferred.Load() {
		return nil
	}
	p.mu.Lock()
	caught := p.targetSet && p.prog.AppliedSeq >= p.prog.TargetSeq
	p.mu.Unlock()
	if pending > 0 && !caught {
		return nil
	}
	err := retryForever(ctx, func() error { return p.store.finishSets(ctx) }, func(err error, _ time.Duration) {
		p.logger.Error("making the signer sets failed, retrying", "err", err)
	})
	if err != nil {
		return err
	}
	if caught || (p.targetSet && pending == 0) {
		p.markCaughtUp()
	}
	return nil
}

// gatherChunks appends to batch the items of c, once decoded, and of the
// chunks that are already waiting on ordered, while they fit in BatchSize.
// It returns the error that ended the reading, if a chunk carries one.
func (p *Projector) gatherChunks(c *chunk, ordered <-chan *chunk, batch []msgItem) ([]msgItem, error) {
	for {
		<-c.done
		batch = append(batch, c.items...)
		if c.err != nil {
			return batch, c.err
		}
		c.release() // after the last use of c: the chunker may reuse it at once
		if len(batch)+chunkSize > p.cfg.BatchSize {
			return batch, nil
		}
		select {
		case c = <-ordered:
		default:
			return batch, nil
		}
	}
}

// commitBatch dead-letters the invalid events of batch, then applies it, retrying
// with backoff until it succeeds or ctx is done. lastSeen guards against a
// message delivered twice within a session.
func (p *Projector) commitBatch(ctx context.Context, batch []msgItem, lastSeen *uint64) error {
	items := p.itemsBuf[:0]
	var last msgItem
	for i := range batch {
		m := &batch[i]
		if m.seq <= *lastSeen {
			continue
		}
		*lastSeen = m.seq
		if m.decErr != nil {
			if err := p.deadLetter(ctx, m); err != nil {
				return err
			}
		}
		items = append(items, m.item)
		last = *m
	}
	full := items
	defer func() { clear(full); p.itemsBuf = full[:0] }()
	if len(items) == 0 {
		return nil
	}
	return retryForever(ctx, func() error {
		st, err := p.store.applyBatch(items)
		if err == nil {
			p.observeVisible(items)
			p.traceBatch(ctx, items)
			p.recordCommit(items[len(items)-1], st, last.pending)
			return nil
		}
		// Part of the batch may have been committed: resume after the checkpoint.
		if cp, _, cerr := p.store.checkpoint(); cerr == nil {
			for len(items) > 0 && items[0].seq <= cp {
				items = items[1:]
			}
			if st != (batchStats{}) {
				p.recordCommit(item{seq: cp}, st, last.pending+uint64(len(items)))
			}
			if len(items) == 0 {
				return nil
			}
		}
		return err
	}, func(err error, _ time.Duration) {
		p.logger.Error("store write failed, retrying", "err", err, "first_seq", items[0].seq)
	})
}

// recordCommit records a committed batch ending at last in the progress.
func (p *Projector) recordCommit(last item, st batchStats, pending uint64) {
	p.mu.Lock()
	p.prog.AppliedSeq = last.seq
	if !last.time.IsZero() {
		p.prog.LastEventTime = last.time
	}
	if end := last.seq + pending; end > p.prog.StreamLastSeq {
		p.prog.StreamLastSeq = end
	}
	p.prog.Applied += st.applied
	p.prog.Skipped += st.skipped
	p.prog.DeadLettered += st.deadLettered
	caught := p.targetSet && (p.prog.AppliedSeq >= p.prog.TargetSeq || pending == 0)
	p.mu.Unlock()
	p.pos.advance(last.seq)
	if caught {
		p.markCaughtUp()
	}
	p.hooks.committed(last.seq)
}
