package replica

import (
	"context"
	"errors"
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
	dir, err := newModelDir(r.cfg.Root)
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
		if rerr := removeModel(r.cfg.Root, dir); rerr != nil {
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
		// A stream that cannot carry the origin's positions stays so: no retry.
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) || errors.Is(err, projector.ErrUnsupportedStream) {
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
	store, err := openStore(r.cfg, dir)
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
	err := forgetCompaction(r.cfg.Root) // the record was of old's files
	if err == nil {
		err = activate(r.cfg.Root, next.dir)
	}
	if err != nil {
		return errors.Join(err, next.store.Close())
	}
	r.cur.Store(next)
	_ = r.retire(old) // logged; what is left is removed at the next start
	return nil
}

// retire closes and deletes old, no longer current, once no reader holds
// it. A failure to delete it is logged and returned: what is left is
// removed at the next start.
func (r *Replica) retire(old *generation) error {
	close(old.retired)
	old.drain()
	if err := old.store.Close(); err != nil {
		r.logger.Warn("replaced read model not closed cleanly", "dir", old.dir, "err", err)
	}
	if err := removeModel(r.cfg.Root, old.dir); err != nil {
		r.logger.Error("replaced read model not deleted (it is deleted at the next start)", "err", err)
		return err
	}
	r.logger.Info("replaced read model deleted", "dir", old.dir)
	return nil
}
