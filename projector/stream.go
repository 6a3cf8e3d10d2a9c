package projector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/periodic"
)

// checkIdentity compares the origin of the stream found (origin.go: the
// stream itself, or the stream it mirrors) with the identity recorded in
// the store, recording it in a fresh store, and binds the store to it. It
// returns an error wrapping ErrUnsupportedStream for a stream that does not
// carry its origin's sequences, one wrapping ErrStreamMismatch when the
// origins differ or the checkpoint is beyond the stream's last sequence,
// and another error when the comparison could not be made (retried).
func (p *Projector) checkIdentity(ctx context.Context, stream jetstream.Stream) error {
	info := stream.CachedInfo()
	org, err := originOf(info)
	if err != nil {
		return err
	}
	recorded, ok, err := p.store.streamIdentity()
	if err != nil {
		return err
	}
	cp, cpTime, err := p.store.checkpoint()
	if err != nil {
		return err
	}
	mismatch := func(what string) error {
		return fmt.Errorf("%w: stream %q: %s; rebuild the read model into a new data dir with `lookupd project --until-caught-up`, or set LOOKUP_REBUILD_ON_MISMATCH=true",
			ErrStreamMismatch, p.cfg.Stream, what)
	}
	if !ok && cp > 0 {
		return mismatch(fmt.Sprintf("the store has checkpoint %d but records no stream identity, found stream %s", cp, org.id))
	}
	bind := org.id
	if ok {
		why, err := sameOrigin(ctx, recorded, cp, cpTime, org.id, streamMessageTime(stream))
		if err != nil {
			return err
		}
		if why != "" {
			return mismatch(fmt.Sprintf("the store records stream %s (checkpoint %d), found stream %s%s: %s",
				recorded, cp, org.id, org.through(), why))
		}
		bind = richer(recorded, org.id)
	}
	if cp > info.State.LastSeq {
		return mismatch(fmt.Sprintf("the store's checkpoint %d is beyond the last sequence %d of stream %s", cp, info.State.LastSeq, org.id))
	}
	if err := p.store.bindStream(bind, !ok || !bind.equal(recorded)); err != nil {
		return err
	}
	p.mu.Lock()
	p.ident = streamIdentity{name: info.Config.Name, created: info.Created}
	p.mu.Unlock()
	return nil
}

// lookUpStream looks the stream up, checks that the store belongs to it (see
// checkIdentity), records its state and, the first time, the caught-up
// target.
func (p *Projector) lookUpStream(ctx context.Context) (jetstream.Stream, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := p.js.Stream(rctx, p.cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("look up stream %q: %w", p.cfg.Stream, err)
	}
	p.setReached(true)
	// Before observeStream: a store of another stream must not be reported
	// caught up.
	if err := p.checkIdentity(rctx, stream); err != nil {
		return nil, err
	}
	p.observeStream(stream.CachedInfo())
	p.observeMirror(stream.CachedInfo(), time.Now())
	return stream, nil
}

// observeStream records the stream's last sequence, and takes the caught-up
// target the first time.
func (p *Projector) observeStream(info *jetstream.StreamInfo) {
	if info == nil {
		return
	}
	last := info.State.LastSeq
	p.mu.Lock()
	if last > p.prog.StreamLastSeq {
		p.prog.StreamLastSeq = last
	}
	if !p.targetSet {
		p.targetSet = true
		p.prog.TargetSeq = last
	}
	caught := p.prog.AppliedSeq >= p.prog.TargetSeq
	p.mu.Unlock()
	if caught {
		p.markCaughtUp()
	}
}

// markCaughtUp says the projector has caught up, once, unless its writer
// has yet to make the signer sets of a rebuild (finishRebuild says it
// then).
func (p *Projector) markCaughtUp() {
	if p.store.setsDeferred.Load() {
		return
	}
	p.caughtUpOnce.Do(func() {
		p.mu.Lock()
		p.prog.CaughtUp = true
		seq := p.prog.AppliedSeq
		p.mu.Unlock()
		p.logger.Info("caught up with the stream", "applied_seq", seq)
		close(p.caughtUp)
	})
}

// refreshLoop polls the stream's state for Progress until ctx is done.
func (p *Projector) refreshLoop(ctx context.Context, stream jetstream.Stream) {
	periodic.Every(ctx, p.cfg.RefreshInterval, func(time.Time) { p.refreshStream(ctx, stream) })
}

// refreshStream reads the stream's state once: whether it is reachable,
// its last sequence and oldest unapplied event, and whether it is gone or
// replaced (which ends the session).
func (p *Projector) refreshStream(ctx context.Context, stream jetstream.Stream) {
	rctx, cancel := context.WithTimeout(ctx, p.cfg.RefreshInterval)
	info, err := stream.Info(rctx)
	cancel()
	replaced := false
	if err == nil {
		p.mu.Lock()
		id := p.ident
		p.mu.Unlock()
		replaced = id.name != "" && !id.equal(streamIdentity{name: info.Config.Name, created: info.Created})
	}
	if errors.Is(err, jetstream.ErrStreamNotFound) || replaced {
		// The stream was deleted (or replaced): end the session (its
		// ordered consumer would retry forever), so that Run finds out
		// and returns.
		select {
		case p.streamGone <- struct{}{}:
		default:
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			p.setReached(false)
		}
		return
	}
	p.setReached(true)
	p.observeStream(info)
	p.observeMirror(info, time.Now())
	p.observeOldest(ctx, stream)
}

// checkNotReplaced guards against a stream deleted and created again under
// the session: the ordered consumer then recreates itself on the new stream
// and delivers its messages. For the session's first batch, and whenever the
// consumer sequence of batch does not follow on from the previous one (the
// consumer was recreated), it checks, before anything of batch is committed, that the stream is still the one
// the store is bound to; if not it returns an error, ending the session, and
// Run finds the mismatch.
func (p *Projector) checkNotReplaced(ctx context.Context, batch []msgItem, lastCSeq *uint64) error {
	recreated := false
	for i := range batch {
		if *lastCSeq == 0 || batch[i].cseq != *lastCSeq+1 { // first batch of the session, or a reset
			recreated = true
		}
		*lastCSeq = batch[i].cseq
	}
	if !recreated {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := p.js.Stream(rctx, p.cfg.Stream)
	if err != nil {
		return fmt.Errorf("check stream after consumer reset: %w", err)
	}
	info := stream.CachedInfo()
	p.mu.Lock()
	id := p.ident
	p.mu.Unlock()
	if !id.equal(streamIdentity{name: info.Config.Name, created: info.Created}) {
		return fmt.Errorf("stream %q was replaced", p.cfg.Stream)
	}
	return nil
}
