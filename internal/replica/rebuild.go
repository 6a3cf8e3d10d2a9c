package replica

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lookup/persons/internal/crash"
	"github.com/lookup/persons/projector"
)

// Rebuild starts building a fresh read model from the start of the
// stream, in a new directory beside the live one, while the live one
// keeps serving; once it has caught up it is swapped in (see swap) and the
// old one deleted. It returns at once: ErrRebuildRunning while a rebuild
// is under way, an error before Run has started. Progress and the
// outcome are logged and in the metrics.
func (r *Replica) Rebuild() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.runCtx == nil || r.runCtx.Err() != nil {
		return errors.New("rebuild: the replica is not running")
	}
	if r.rebuilding {
		return ErrRebuildRunning
	}
	dir, err := newModelDir(r.cfg.Root)
	if err != nil {
		return fmt.Errorf("rebuild: %w", err)
	}
	store, err := openStore(r.cfg, dir)
	if err != nil {
		return errors.Join(fmt.Errorf("rebuild: %w", err), removeModel(r.cfg.Root, dir))
	}
	r.rebuilding = true
	r.metrics.rebuilding.Set(1)
	next := newGeneration(dir, store, r.cfg.NewProjector(store))
	ctx := r.runCtx
	r.bg.Add(1)
	go func() {
		defer crash.Guard()
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
			err = errors.Join(err, next.store.Close(), removeModel(r.cfg.Root, next.dir))
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
	if err := activate(r.cfg.Root, next.dir); err != nil {
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
		defer crash.Guard()
		<-next.done
		if next.err != nil {
			select {
			case r.failed <- genError{next, next.err}:
			case <-ctx.Done():
			}
		}
	}()
}
