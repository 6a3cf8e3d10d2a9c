package replica

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/lookup/persons/internal/crash"
	"github.com/lookup/persons/projector"
)

// generation is one read model of the replica: its directory, its store
// and the projector that feeds it. Readers hold a reference while they
// read (acquire/release); retiring a generation waits for them before its
// store is closed, so a read that started on it finishes on it.
type generation struct {
	dir   string
	store *projector.Store
	proj  *projector.Projector

	refs    atomic.Int64
	closing atomic.Bool
	// retired is closed when the generation is no longer the current one.
	retired chan struct{}

	cancel context.CancelFunc // stops the projector; nil until started
	done   chan struct{}      // closed when the projector has returned
	err    error              // the projector's result, set before done
}

func newGeneration(dir string, store *projector.Store, proj *projector.Projector) *generation {
	return &generation{dir: dir, store: store, proj: proj, retired: make(chan struct{}), done: make(chan struct{})}
}

// acquire takes a reference, false when the generation is being closed
// (the caller reads the current generation instead).
func (g *generation) acquire() bool {
	g.refs.Add(1)
	if g.closing.Load() {
		g.refs.Add(-1)
		return false
	}
	return true
}

func (g *generation) release() { g.refs.Add(-1) }

// start runs the projector until ctx is done or it fails; report is
// called with its error, if any, after done is closed.
func (g *generation) start(ctx context.Context, report func(*generation, error)) {
	ctx, g.cancel = context.WithCancel(ctx)
	go func() {
		defer crash.Guard()
		g.err = g.proj.Run(ctx)
		close(g.done)
		if g.err != nil {
			report(g, g.err)
		}
	}()
}

// stop stops the projector, if started, and waits for it.
func (g *generation) stop() {
	if g.cancel != nil {
		g.cancel()
		<-g.done
	}
}

// drain marks the generation closing and waits until no reader holds it.
func (g *generation) drain() {
	g.closing.Store(true)
	for g.refs.Load() > 0 {
		time.Sleep(time.Millisecond)
	}
}
