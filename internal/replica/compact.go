package replica

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/lookup/persons/internal/crash"
	"github.com/lookup/persons/projector"
)

// Compaction by copy. Badger keeps the values that later writes
// overwrote (a deleted person's record under its tombstone) in its files
// until its own compaction happens to meet them, which nothing forces. A
// snapshot of the live model (projector.Store.Snapshot) holds the newest
// version of each key only; restored into a fresh model directory beside
// the live one, projecting from its position until it has caught up and
// swapped in as a rebuild is (swap), it is the same model without them.
// Then the old directory is deleted and the compaction recorded
// (compaction.json, layout.go).
//
// The stages a compaction reaches, given to compactHook (tests).
const (
	stageRestore = "restore"  // the new directory made, the copy about to start
	stageCatchUp = "catch-up" // the copy restored, its projector started
	stageSwap    = "swap"     // the copy caught up, about to be swapped in
)

// CompactionInfo is what the data directory records of its last
// compaction (Compacted).
type CompactionInfo struct {
	// Position is the model's position the copy was taken at: every
	// deletion with Seq <= Position is gone from the files of the data
	// directory (what the deleted entity's records held before).
	Position uint64
	// At is when the copy was swapped in and the old directory removed.
	At time.Time
}

// Compact compacts the live model by copy (see above) and returns what it
// recorded. Reads never stop: they are served by the live model until the
// copy is swapped in, and a read that started on it finishes on it.
// Compact returns once the copy is swapped in, the old model's directory
// deleted and the compaction recorded, or on failure, when the copy is
// deleted and the live model kept (its record unchanged). It fails with
// ErrCompactionRunning or ErrRebuildRunning while a compaction or a
// rebuild is under way, with an error before Run has started and after it
// has returned, and with ctx's error when ctx is done first (or Run's
// context). A crash at any point leaves either model active, whole, and
// the other is deleted at the next Open. Config.Building is called around
// it: two models are open meanwhile.
func (r *Replica) Compact(ctx context.Context) (CompactionInfo, error) {
	ctx, run, end, err := r.beginCompaction(ctx)
	if err != nil {
		return CompactionInfo{}, err
	}
	defer end()
	start := time.Now()
	info, err := r.compact(ctx, run)
	r.metrics.compactionDone(info, time.Since(start), err)
	if err != nil {
		if ctx.Err() == nil {
			r.logger.Error("compaction failed", "err", err, "duration", time.Since(start))
		}
		return CompactionInfo{}, err
	}
	return info, nil
}

// beginCompaction marks a compaction under way. It returns the context it
// runs under (ctx, also cancelled when Run's is), Run's context and end,
// which marks it over and then starts the rebuild the live model may need
// (a stream mismatch met meanwhile: Run's Rebuild was refused).
func (r *Replica) beginCompaction(ctx context.Context) (context.Context, context.Context, func(), error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.runCtx == nil || r.runCtx.Err() != nil:
		return nil, nil, nil, errors.New("compaction: the replica is not running")
	case r.rebuilding:
		return nil, nil, nil, ErrRebuildRunning
	case r.compacting:
		return nil, nil, nil, ErrCompactionRunning
	case isMismatch(r.cur.Load()):
		return nil, nil, nil, errors.New("compaction: the read model belongs to another stream")
	}
	r.compacting = true
	r.bg.Add(1) // under mu while runCtx is set: see stopRebuilds
	run := r.runCtx
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(run, cancel)
	end := func() {
		stop()
		cancel()
		r.mu.Lock()
		r.compacting = false
		rebuild := r.runCtx != nil && r.cfg.RebuildOnMismatch && isMismatch(r.cur.Load())
		r.mu.Unlock()
		if rebuild {
			if err := r.Rebuild(); err != nil && !errors.Is(err, ErrRebuildRunning) {
				r.logger.Error("rebuild after a stream mismatch not started", "err", err)
			}
		}
		r.bg.Done()
	}
	return ctx, run, end, nil
}

// compact copies the live model into a new directory, catches it up and
// swaps it in (its projector runs under run, Run's context, and the
// waits under ctx), then records the compaction. On failure before the
// swap's commit point the copy is stopped, closed and deleted.
func (r *Replica) compact(ctx, run context.Context) (info CompactionInfo, err error) {
	if r.cfg.Building != nil {
		r.cfg.Building(true)
		defer r.cfg.Building(false)
	}
	dir, err := newModelDir(r.cfg.Root)
	if err != nil {
		return info, fmt.Errorf("compaction: %w", err)
	}
	if err := r.stage(ctx, stageRestore); err != nil {
		return info, errors.Join(err, removeModel(r.cfg.Root, dir))
	}
	next, copied, err := r.copyInto(ctx, dir)
	if err != nil {
		return info, errors.Join(fmt.Errorf("compaction: copy the live model: %w", err), removeModel(r.cfg.Root, dir))
	}
	defer func() {
		if err != nil && r.cur.Load() != next {
			next.stop()
			err = errors.Join(err, next.store.Close(), removeModel(r.cfg.Root, next.dir))
		}
	}()
	r.logger.Info("compaction: the live read model copied; catching up", "dir", dir, "position", copied.Position,
		"keys", copied.Keys)
	next.start(run, func(*generation, error) {})
	if err := r.stage(ctx, stageCatchUp); err != nil {
		return info, err
	}
	err = r.catchUp(ctx, next, "compaction", func(p projector.Progress) {
		r.logger.Info("compaction catching up", "dir", dir, "applied_sequence", p.AppliedSeq, "target_sequence", p.TargetSeq)
	})
	if err != nil {
		return info, err
	}
	if err := r.stage(ctx, stageSwap); err != nil {
		return info, err
	}
	oldSize := dirSize(r.Dir())
	if err := r.swap(ctx, run, next, "compaction"); err != nil {
		return info, err
	}
	info = CompactionInfo{Position: copied.Position, At: time.Now().UTC()}
	if err := writeCompaction(r.cfg.Root, info); err != nil {
		return CompactionInfo{}, fmt.Errorf("compaction: %w", err)
	}
	r.logger.Info("read model compacted", "position", info.Position, "applied_sequence", next.proj.Position().Applied(),
		"keys", copied.Keys, "old_bytes", oldSize, "new_bytes", dirSize(next.dir))
	return info, nil
}

// copyInto opens a store in dir and restores into it a snapshot of the
// live model, written through a pipe, and returns it as a generation (its
// projector not started) with what the snapshot held. On error the store
// is closed.
func (r *Replica) copyInto(ctx context.Context, dir string) (*generation, projector.SnapshotInfo, error) {
	store, err := openStore(r.cfg, dir)
	if err != nil {
		return nil, projector.SnapshotInfo{}, err
	}
	info, err := r.copyLive(ctx, store)
	if err != nil {
		return nil, info, errors.Join(err, store.Close())
	}
	return newGeneration(dir, store, r.cfg.NewProjector(store)), info, nil
}

// copyLive writes a snapshot of the live model into a pipe, on a
// goroutine of its own, and restores it from the pipe into store. ctx
// done closes the pipe: both ends stop within a write.
func (r *Replica) copyLive(ctx context.Context, store *projector.Store) (projector.SnapshotInfo, error) {
	g := r.acquire()
	defer g.release()
	sn, err := g.store.Snapshot()
	if err != nil {
		return projector.SnapshotInfo{}, err
	}
	defer sn.Close()
	pr, pw := io.Pipe()
	stop := context.AfterFunc(ctx, func() { pr.CloseWithError(ctx.Err()) })
	defer stop()
	written := make(chan error, 1)
	go func() {
		defer crash.Guard()
		_, err := sn.WriteTo(pw)
		pw.CloseWithError(err) // nil: the reader sees the end of the snapshot
		written <- err
	}()
	info, err := store.RestoreSnapshot(pr, nil)
	pr.CloseWithError(errors.New("the restore has ended")) // a writer still writing stops
	werr := <-written
	if err != nil {
		if ctx.Err() != nil {
			return info, ctx.Err()
		}
		return info, err
	}
	return info, werr
}

// stage calls compactHook, if set, with the stage a compaction reached,
// and returns ctx's error: a compaction cancelled stops there.
func (r *Replica) stage(ctx context.Context, s string) error {
	if r.compactHook != nil {
		r.compactHook(s)
	}
	return ctx.Err()
}

// dirSize returns the bytes of the files under dir (for the logs; -1 when
// it cannot be read).
func dirSize(dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err == nil {
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		return -1
	}
	return n
}

// Compacted returns the last compaction of the data directory's active
// model, as recorded there; the zero value if none is (never compacted,
// or the model was since replaced by a restore or a rebuild).
func (r *Replica) Compacted() (CompactionInfo, error) { return readCompaction(r.cfg.Root) }

// LastDeletion returns the stream sequence of the newest deletion the
// model being served has applied, 0 if none (projector.Store.LastDeletion).
func (r *Replica) LastDeletion() (uint64, error) {
	g := r.acquire()
	defer g.release()
	return g.store.LastDeletion()
}

// deletionsPage is how many deletions Deletions reads from a model before
// calling fn with them, holding no model.
const deletionsPage = 1000

// errPageFull ends the read of a page of deletions.
var errPageFull = errors.New("page full")

// Deletions calls fn with each deletion the model being served has
// applied with Seq > after, in stream order (projector.Store.Deletions),
// until fn returns an error (returned), ctx is done (its error) or there
// is none left (nil). They are read a page at a time, each from the model
// being served then, which is held (as a read holds it) only while the
// page is read, not while fn runs: a swap meanwhile does not wait for fn,
// and the scan goes on in the new model (a copy or a rebuild of the same
// stream, at or beyond the old one's position, holds the same deletions).
func (r *Replica) Deletions(ctx context.Context, after uint64, fn func(projector.Deletion) error) error {
	for {
		page, err := r.deletionsAfter(ctx, after)
		if err != nil {
			return err
		}
		for _, d := range page {
			if err := fn(d); err != nil {
				return err
			}
			after = d.Seq
		}
		if len(page) < deletionsPage {
			return nil
		}
	}
}

// deletionsAfter reads up to deletionsPage deletions with Seq > after from
// the model being served.
func (r *Replica) deletionsAfter(ctx context.Context, after uint64) ([]projector.Deletion, error) {
	g := r.acquire()
	defer g.release()
	page := make([]projector.Deletion, 0, 64)
	err := g.store.Deletions(ctx, after, func(d projector.Deletion) error {
		page = append(page, d)
		if len(page) == deletionsPage {
			return errPageFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errPageFull) {
		return nil, err
	}
	return page, nil
}
