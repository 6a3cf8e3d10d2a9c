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
	if r.compacting {
		return ErrCompactionRunning
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
	err = r.catchUp(ctx, next, "rebuild", func(p projector.Progress) {
		r.metrics.rebuildApplied.Set(float64(p.AppliedSeq))
		r.logger.Info("rebuilding", "dir", next.dir, "applied_sequence", p.AppliedSeq, "target_sequence", p.TargetSeq)
	})
	if err != nil {
		return err
	}
	r.metrics.rebuildApplied.Set(float64(next.proj.Position().Applied()))
	r.logger.Info("rebuild caught up; swapping", "dir", next.dir, "applied_sequence", next.proj.Position().Applied(),
		"duration", time.Since(start))
	if err := r.swap(ctx, ctx, next, "rebuild"); err != nil && !errors.Is(err, errOldModelLeft) {
		return err
	}
	return nil
}

// catchUp waits until next's projector, running, has caught up, calling
// progress with its progress every 5 seconds meanwhile. It fails when the
// projector stops or ctx is done; what names the work in the error.
func (r *Replica) catchUp(ctx context.Context, next *generation, what string, progress func(projector.Progress)) error {
	tick := time.NewTicker(5 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-next.proj.CaughtUp():
			return nil
		case <-next.done:
			return fmt.Errorf("%s: projector stopped: %w", what, next.err)
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			progress(next.proj.Progress())
		}
	}
}

// errOldModelLeft: a swap was completed but the replaced model's files
// could not all be deleted (they are at the next start).
var errOldModelLeft = errors.New("the replaced read model was not deleted")

// swap makes next, caught up and projecting, the model being served; what
// ("rebuild" or "compaction") names the work in errors and logs. For the
// same stream, next is activated once it has reached the live model's
// position (waiting under wait), then the live projector is stopped and
// next is swapped in once it has reached that final position too (waiting
// under run, the replica's Run context: skipped on shutdown only), so that
// the position readers see never decreases. For a model of another stream
// (a rebuild after a mismatch) positions are not comparable and next is
// swapped in at once; a compaction is refused then. A rebuild forgets the
// data directory's compaction record first (its model's files hold what
// its projection overwrote). Activation (ACTIVE rewritten) is the commit
// point: after it the swap is always completed, and an error then wraps
// errOldModelLeft.
func (r *Replica) swap(wait, run context.Context, next *generation, what string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	old := r.cur.Load()
	sameStream := !isMismatch(old)
	if !sameStream && what == "compaction" {
		return errors.New("compaction: the live read model belongs to another stream")
	}
	if sameStream {
		for next.proj.Position().Applied() < old.proj.Position().Applied() {
			if err := next.proj.Position().Wait(wait, old.proj.Position().Applied()); err != nil {
				return fmt.Errorf("%s: waiting for the live model's position: %w", what, err)
			}
		}
	}
	if err := wait.Err(); err != nil { // cancelled: not activated
		return err
	}
	if what != "compaction" {
		if err := forgetCompaction(r.cfg.Root); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
	}
	if err := activate(r.cfg.Root, next.dir); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if r.swapHook != nil {
		r.swapHook()
	}
	old.stop()
	if sameStream {
		// Short: next was at least where old was a moment ago. Skipped on
		// shutdown, when positions no longer matter.
		_ = next.proj.Position().Wait(run, old.proj.Position().Applied())
	}
	r.cur.Store(next)
	r.watchCurrent(run, next)
	r.markCaughtUp()
	retireErr := r.retire(old)
	msg := "rebuilt read model swapped in; the old one is deleted"
	if what == "compaction" {
		msg = "compacted read model swapped in; the old one is deleted"
	}
	r.logger.Info(msg, "dir", next.dir, "old_dir", old.dir, "applied_sequence", next.proj.Position().Applied())
	if retireErr != nil {
		return fmt.Errorf("%s: %w: %w", what, errOldModelLeft, retireErr)
	}
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
