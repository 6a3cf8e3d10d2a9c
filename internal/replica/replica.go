// Package replica runs the read model of one replica over its life: it
// opens the active model of the data directory (ActiveDir),
// bootstraps an empty one from the newest matching snapshot, takes
// snapshots, rebuilds a fresh model beside the live one (blue/green) and
// swaps it in, and compacts the live one by copy (Compact: the newest
// version of each key copied into a fresh model, swapped in the same way,
// so that what deletions overwrote is gone from the files), while readers
// are served throughout.
//
// A Replica is what the API reads (query.Reader, query.Positioner) and
// what readiness and metrics watch (Progress, CaughtUp): each delegates to
// the current generation, the model being served. A read that started on a
// generation finishes on it, even across a swap.
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/crash"
	"github.com/lookup/persons/projector"
)

// ErrRebuildRunning is returned by Rebuild and Compact while a rebuild is
// under way.
var ErrRebuildRunning = errors.New("a rebuild is already running")

// ErrCompactionRunning is returned by Compact and Rebuild while a
// compaction is under way.
var ErrCompactionRunning = errors.New("a compaction is already running")

// ErrNotCaughtUp is returned by Snapshot before the read model has caught
// up with the stream.
var ErrNotCaughtUp = errors.New("the read model has not caught up yet")

// Config configures a Replica.
type Config struct {
	// Root is the data directory (see ActiveDir).
	Root string
	// Store are the options every model directory's store is opened
	// (created if needed) with: its encryption key, memory budget, logger.
	Store projector.StoreOptions
	// NewProjector returns the projector that feeds a store.
	NewProjector func(*projector.Store) *projector.Projector
	// Snapshots, when set, is the bucket an empty model is bootstrapped
	// from and Snapshot writes to.
	Snapshots *projector.Snapshots
	// Stream returns the identity of the source stream's incarnation (for
	// choosing a snapshot).
	Stream func(ctx context.Context) (projector.StreamIdentity, error)
	// RebuildOnMismatch: when the model belongs to another stream or
	// another incarnation of it (projector.ErrStreamMismatch), rebuild it
	// beside the old one instead of stopping.
	RebuildOnMismatch bool
	// Building, when set, is called with true before a snapshot is
	// restored or a rebuild starts, and with false when it is over
	// (cmd/lookupd lifts the Go soft memory limit meanwhile: Badger's
	// StreamWriter holds a few hundred MiB while it loads a million
	// entities, a rebuild keeps two models open, and under the limit the
	// collector would run back to back, taking the CPU the API needs).
	// Each true is followed by one false.
	Building func(bool)
	// Registerer receives the metrics of snapshots, restores, rebuilds and
	// compactions.
	Registerer prometheus.Registerer
	// Logger; nil: discard.
	Logger *slog.Logger
}

// Replica is the read model of one replica. Open it, Run it, Close it.
type Replica struct {
	cfg     Config
	logger  *slog.Logger
	metrics *metrics

	cur          atomic.Pointer[generation]
	caughtUp     chan struct{}
	caughtUpOnce sync.Once

	// failed receives the error of a current generation's projector.
	failed chan genError
	// mu serializes swaps, rebuild and compaction starts and snapshots'
	// choice of model.
	mu         sync.Mutex
	rebuilding bool
	compacting bool
	runCtx     context.Context
	bg         sync.WaitGroup // rebuilds, compactions and their projectors

	// swapHook, when set (tests), is called right after a rebuilt or
	// compacted model is activated, before the swap completes.
	swapHook func()
	// compactHook, when set (tests), is called with each stage a
	// compaction reaches (compact.go).
	compactHook func(stage string)
	// compactTicked, when set (tests), is called after each tick of
	// CompactEvery with what it did.
	compactTicked func(CompactionInfo, error)
}

type genError struct {
	g   *generation
	err error
}

// Open opens the active read model of cfg.Root, then removes what an
// unfinished restore, rebuild or swap left beside it.
func Open(cfg Config) (*Replica, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	r := &Replica{cfg: cfg, logger: logger.With("component", "replica"), metrics: m,
		caughtUp: make(chan struct{}), failed: make(chan genError, 4)}
	dir, err := ActiveDir(cfg.Root)
	if err != nil {
		return nil, err
	}
	// Opened first: its lock keeps a second process on the same data
	// directory from removing what the first is building.
	store, err := openStore(cfg, dir)
	if err != nil {
		return nil, err
	}
	if err := removeInactive(cfg.Root, r.logger); err != nil {
		return nil, errors.Join(err, store.Close())
	}
	if info, err := readCompaction(cfg.Root); err != nil {
		r.logger.Warn("the compaction record is unreadable; the next compaction rewrites it", "err", err)
	} else {
		m.compacted(info)
	}
	r.cur.Store(newGeneration(dir, store, cfg.NewProjector(store)))
	return r, nil
}

// Run bootstraps an empty model from a snapshot (when a bucket is
// configured) and projects the stream into the current model until ctx is
// done. It returns the projector's error (projector.Projector.Run), but
// for a stream mismatch with RebuildOnMismatch, which starts a rebuild.
// Rebuilds still running when ctx is done are abandoned (their directory
// is removed at the next Open).
func (r *Replica) Run(ctx context.Context) error {
	r.mu.Lock()
	r.runCtx = ctx
	r.mu.Unlock()
	defer r.stopRebuilds()
	if r.cfg.Snapshots != nil {
		r.bootstrap(ctx)
	}
	r.startCurrent(ctx, r.cur.Load())
	for {
		select {
		case <-ctx.Done():
			r.cur.Load().stop()
			return nil
		case f := <-r.failed:
			if f.g != r.cur.Load() {
				continue // a replaced generation's late error
			}
			if errors.Is(f.err, projector.ErrStreamMismatch) && r.cfg.RebuildOnMismatch {
				r.logger.Warn("the read model belongs to another stream; rebuilding it beside the old one (LOOKUP_REBUILD_ON_MISMATCH)", "err", f.err)
				// A compaction under way fails (its projector meets the same
				// mismatch) and then starts the rebuild (endCompaction).
				if err := r.Rebuild(); err != nil && !errors.Is(err, ErrRebuildRunning) && !errors.Is(err, ErrCompactionRunning) {
					return err
				}
				continue
			}
			return f.err
		}
	}
}

// stopRebuilds refuses rebuilds from now on and waits for those running.
// Rebuild adds to bg under mu only while runCtx is set, so every Add
// happens before this Wait (a WaitGroup's Add from zero must not race its
// Wait: an admin's POST /rebuild during a shutdown did).
func (r *Replica) stopRebuilds() {
	r.mu.Lock()
	r.runCtx = nil
	r.mu.Unlock()
	r.bg.Wait()
}

// startCurrent starts g's projector, reporting its failure to Run, and
// closes CaughtUp once it has caught up.
func (r *Replica) startCurrent(ctx context.Context, g *generation) {
	g.start(ctx, func(g *generation, err error) {
		select {
		case r.failed <- genError{g, err}:
		case <-ctx.Done():
		}
	})
	go func() {
		defer crash.Guard()
		select {
		case <-g.proj.CaughtUp():
			r.markCaughtUp()
		case <-g.retired:
		case <-ctx.Done():
		}
	}()
}

func (r *Replica) markCaughtUp() { r.caughtUpOnce.Do(func() { close(r.caughtUp) }) }

// openStore opens (creating if needed) the store of the model directory
// dir with cfg.Store; the error names the read model.
func openStore(cfg Config, dir string) (*projector.Store, error) {
	s, err := projector.Open(dir, cfg.Store)
	if err != nil {
		return nil, fmt.Errorf("read model: %w", err)
	}
	return s, nil
}

// Close closes the current model's store, after its readers. Call it after
// Run has returned.
func (r *Replica) Close() error {
	g := r.cur.Load()
	g.stop()
	g.drain()
	return g.store.Close()
}

// CaughtUp is closed once the model being served has caught up with the
// stream (see projector.Projector.CaughtUp); it stays closed across swaps.
func (r *Replica) CaughtUp() <-chan struct{} { return r.caughtUp }

// Progress returns the progress of the projector of the model being
// served.
func (r *Replica) Progress() projector.Progress { return r.cur.Load().proj.Progress() }

// Dir returns the directory of the model being served.
func (r *Replica) Dir() string { return r.cur.Load().dir }

// Applied returns the position of the model being served; it never
// decreases, across swaps too (a rebuilt model of the same stream is
// swapped in only once it has reached the old one's position).
func (r *Replica) Applied() uint64 { return r.cur.Load().proj.Position().Applied() }

// Wait returns nil once Applied() >= n, or ctx's error first, following
// the model being served across swaps.
func (r *Replica) Wait(ctx context.Context, n uint64) error {
	for {
		g := r.cur.Load()
		wctx, cancel := context.WithCancel(ctx)
		stop := afterClose(g.retired, cancel)
		err := g.proj.Position().Wait(wctx, n)
		stop()
		cancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}

// afterClose calls f when ch is closed, until the returned stop is called.
func afterClose(ch <-chan struct{}, f func()) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer crash.Guard()
		select {
		case <-ch:
			f()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// Person reads the model being served (query.Reader).
func (r *Replica) Person(ctx context.Context, id string) (events.Person, error) {
	g := r.acquire()
	defer g.release()
	return g.store.Person(ctx, id)
}

// Signers reads the model being served (query.Reader).
func (r *Replica) Signers(ctx context.Context, consumerID string) (events.Person, []events.Signer, error) {
	g := r.acquire()
	defer g.release()
	return g.store.Signers(ctx, consumerID)
}

// acquire returns the current generation with a reference held.
func (r *Replica) acquire() *generation {
	for {
		if g := r.cur.Load(); g.acquire() {
			return g
		}
	}
}

// Snapshots returns the snapshot bucket of Config.Snapshots (nil: none).
func (r *Replica) Snapshots() *projector.Snapshots { return r.cfg.Snapshots }

// Snapshot writes a snapshot of the model being served to the bucket
// (Config.Snapshots, which must be set) and returns its object name. It
// returns ErrNotCaughtUp before the model has caught up.
func (r *Replica) Snapshot(ctx context.Context) (projector.SnapshotInfo, string, error) {
	if r.cfg.Snapshots == nil {
		return projector.SnapshotInfo{}, "", errors.New("no snapshot bucket configured")
	}
	select {
	case <-r.caughtUp:
	default:
		return projector.SnapshotInfo{}, "", ErrNotCaughtUp
	}
	g := r.acquire()
	defer g.release()
	start := time.Now()
	info, name, err := r.cfg.Snapshots.Take(ctx, g.store)
	r.metrics.snapshotDone(info, start, err)
	if err != nil {
		return info, "", fmt.Errorf("snapshot: %w", err)
	}
	r.logger.Info("snapshot stored", "bucket", r.cfg.Snapshots.Bucket(), "snapshot", name, "position", info.Position,
		"keys", info.Keys, "duration", time.Since(start))
	return info, name, nil
}
