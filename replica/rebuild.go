package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lookup/persons/projector"
)

// bootstrap restores the newest matching snapshot into a new model
// directory when the current model is empty, and makes it the current
// model. Any failure leaves the empty model current: the projector then
// replays the stream from the start. Readers are answered 503 meanwhile
// (nothing has caught up).
func (r *Replica) bootstrap(ctx context.Context) {
	g := r.cur.Load()
	if empty, err := g.store.Empty(); err != nil || !empty {
		return
	}
	start := time.Now()
	outcome := "none"
	defer func() { r.metrics.restores.WithLabelValues(outcome).Inc() }()
	ident, err := r.streamIdentity(ctx)
	if err != nil {
		r.logger.Warn("no snapshot restored: the stream cannot be looked up; replaying it from the start", "err", err)
		outcome = "failed"
		return
	}
	dir, err := projector.NewModelDir(r.cfg.Root)
	if err != nil {
		r.logger.Error("no snapshot restored; replaying the stream from the start", "err", err)
		outcome = "failed"
		return
	}
	r.logger.Info("the read model is empty; restoring the newest snapshot", "bucket", r.cfg.Snapshots.Bucket(), "dir", dir)
	next, ok, err := r.restoreInto(ctx, dir, ident)
	if err != nil || !ok {
		if err != nil {
			r.logger.Error("no snapshot restored; replaying the stream from the start", "err", err)
			outcome = "failed"
		}
		if rerr := projector.RemoveModel(r.cfg.Root, dir); rerr != nil {
			r.logger.Error("restore directory not removed", "err", rerr)
		}
		return
	}
	if err := r.replace(g, next); err != nil {
		r.logger.Error("restored model not activated; replaying the stream from the start", "err", err)
		outcome = "failed"
		return
	}
	outcome = "restored"
	r.logger.Info("bootstrapped from a snapshot; catching up from its position", "position", next.proj.Position().Applied(),
		"dir", dir, "duration", time.Since(start))
}

// streamIdentity looks the stream up, retrying for a while (NATS may
// still be starting).
func (r *Replica) streamIdentity(ctx context.Context) (projector.StreamIdentity, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		id, err := r.cfg.Stream(cctx)
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) {
			return id, err
		}
		select {
		case <-ctx.Done():
			return id, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// restoreInto opens a store in dir and restores a snapshot into it,
// returning it as a generation (its projector not started) when one was
// restored; otherwise the store is closed.
func (r *Replica) restoreInto(ctx context.Context, dir string, ident projector.StreamIdentity) (*generation, bool, error) {
	store, err := r.cfg.Open(dir)
	if err != nil {
		return nil, false, err
	}
	if r.cfg.Building != nil {
		r.cfg.Building(true)
		defer r.cfg.Building(false)
	}
	_, ok, err := r.cfg.Snapshots.Restore(ctx, store, ident)
	if err != nil || !ok {
		return nil, false, errors.Join(err, store.Close())
	}
	return newGeneration(dir, store, r.cfg.NewProjector(store)), true, nil
}

// replace makes next (a generation whose projector is not running) the
// current model instead of old (whose projector is not running either):
// next's directory is activated, readers move to it, old's are waited
// for, then old's store is closed and deleted.
func (r *Replica) replace(old, next *generation) error {
	if err := projector.Activate(r.cfg.Root, next.dir); err != nil {
		return errors.Join(err, next.store.Close())
	}
	r.cur.Store(next)
	r.retire(old)
	return nil
}

// retire closes and deletes old, no longer current, once no reader holds
// it. A failure is logged: what is left is removed at the next start.
func (r *Replica) retire(old *generation) {
	close(old.retired)
	old.drain()
	if err := old.store.Close(); err != nil {
		r.logger.Warn("replaced read model not closed cleanly", "dir", old.dir, "err", err)
	}
	if err := projector.RemoveModel(r.cfg.Root, old.dir); err != nil {
		r.logger.Error("replaced read model not deleted (it is deleted at the next start)", "err", err)
		return
	}
	r.logger.Info("replaced read model deleted", "dir", old.dir)
}

// Rebuilding reports whether a rebuild is under way (until its model is
// swapped in and the old one deleted, or it failed).
func (r *Replica) Rebuilding() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rebuilding
}

// Rebuild starts building a fresh read model from the start of the
// stream, in a new directory beside the live one, while the live one
// keeps serving; once it has caught up it is swapped in (see swap) and the
// old one deleted. It returns at once: ErrRebuildRunning while a rebuild
// is under way, an error before Run has started. Progress and the
// outcome are logged and in the metrics.
func (r *Replica) Rebuild() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runCtx == nil {
		return errors.New("rebuild: the replica is not running")
	}
	if r.rebuilding {
		return ErrRebuildRunning
	}
	dir, err := projector.NewModelDir(r.cfg.Root)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	store, err := r.cfg.Open(dir)
	if err != nil {
		return errors.Join(fmt.Errorf("rebuild: %w", err), projector.RemoveModel(r.cfg.Root, dir))
	}
	r.rebuilding = true
	r.metrics.rebuilding.Set(1)
	next := newGeneration(dir, store, r.cfg.NewProjector(store))
	ctx := r.runCtx
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		err := r.rebuild(ctx, next)
		r.mu.Lock()
		r.rebuilding = false
		r.mu.Unlock()
		r.metrics.rebuildDone(err)
		if err != nil && ctx.Err() == nil {
			r.logger.Error("rebuild failed; the live read model is kept", "dir", dir, "err", err)
		}
	}()
	return nil
}

// rebuild projects next until it has caught up, then swaps it in. On
// failure next is stopped, closed and deleted.
func (r *Replica) rebuild(ctx context.Context, next *generation) (err error) {
	start := time.Now()
	if r.cfg.Building != nil {
		r.cfg.Building(true)
		defer r.cfg.Building(false)
	}
	r.logger.Info("rebuild started: a fresh read model is being built beside the live one", "dir", next.dir)
	defer func() {
		if err != nil && r.cur.Load() != next {
			next.stop()
			err = errors.Join(err, next.store.Close(), projector.RemoveModel(r.cfg.Root, next.dir))
		}
	}()
	next.start(ctx, func(*generation, error) {})
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for caught := false; !caught; {
		select {
		case <-next.proj.CaughtUp():
			caught = true
		case <-next.done:
			return fmt.Errorf("rebuild: projector stopped: %w", next.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			p := next.proj.Progress()
			r.metrics.rebuildApplied.Set(float64(p.AppliedSeq))
			r.logger.Info("rebuilding", "dir", next.dir, "applied_sequence", p.AppliedSeq, "target_sequence", p.TargetSeq)
		}
	}
	r.metrics.rebuildApplied.Set(float64(next.proj.Position().Applied()))
	r.logger.Info("rebuild caught up; swapping", "dir", next.dir, "applied_sequence", next.proj.Position().Applied(),
		"duration", time.Since(start))
	return r.swap(ctx, next)
}

// swap makes next, caught up and projecting, the model being served. For
// the same stream, next is activated once it has reached the live model's
// position, then the live projector is stopped and next is swapped in once
// it has reached that final position too, so that the position readers see
// never decreases. For a model of another stream (a rebuild after a
// mismatch) positions are not comparable and next is swapped in at once.
// Activation (ACTIVE rewritten) is the commit point: after it the swap is
// always completed.
func (r *Replica) swap(ctx context.Context, next *generation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cur.Load()
	sameStream := !isMismatch(old)
	if sameStream {
		for next.proj.Position().Applied() < old.proj.Position().Applied() {
			if err := next.proj.Position().Wait(ctx, old.proj.Position().Applied()); err != nil {
				return fmt.Errorf("rebuild: waiting for the live model's position: %w", err)
			}
		}
	}
	if err := projector.Activate(r.cfg.Root, next.dir); err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	if r.swapHook != nil {
		r.swapHook()
	}
	old.stop()
	if sameStream {
		// Short: next was at least where old was a moment ago. Skipped on
		// shutdown, when positions no longer matter.
		_ = next.proj.Position().Wait(ctx, old.proj.Position().Applied())
	}
	r.cur.Store(next)
	r.watchCurrent(ctx, next)
	r.markCaughtUp()
	r.retire(old)
	r.logger.Info("rebuilt read model swapped in; the old one is deleted", "dir", next.dir, "old_dir", old.dir,
		"applied_sequence", next.proj.Position().Applied())
	return nil
}

// isMismatch reports whether g's projector stopped on a stream mismatch.
func isMismatch(g *generation) bool {
	select {
	case <-g.done:
		return errors.Is(g.err, projector.ErrStreamMismatch)
	default:
		return false
	}
}

// watchCurrent reports the failure of next, already running, to Run as
// the current model's.
func (r *Replica) watchCurrent(ctx context.Context, next *generation) {
	go func() {
		<-next.done
		if next.err != nil {
			select {
			case r.failed <- genError{next, next.err}:
			case <-ctx.Done():
			}
		}
	}()
}
