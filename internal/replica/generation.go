package replica

import (
	"context"
	"sync"
	"sync/atomic"

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

	// refs counts the readers holding the generation, plus one for the
	// generation itself until drain drops it: the count reaches 0 once,
	// when it is closing and the last reader is gone, and that closes
	// drained.
	refs      atomic.Int64
	closing   atomic.Bool
	drained   chan struct{}
	drainOnce sync.Once
	// retired is closed when the generation is no longer the current one.
	retired chan struct{}

	cancel context.CancelFunc // stops the projector; nil until started
	done   chan struct{}      // closed when the projector has returned
	err    error              // the projector's result, set before done
}

func newGeneration(dir string, store *projector.Store, proj *projector.Projector) *generation {
	g := &generation{dir: dir, store: store, proj: proj, retired: make(chan struct{}), done: make(chan struct{}),
		drained: make(chan struct{})}
	g.refs.Store(1) // the generation's own reference, dropped by drain
	return g
}

// acquire takes a reference, false when the generation is being closed
// (the caller reads the current generation instead).
func (g *generation) acquire() bool {
	g.refs.Add(1)
	if g.closing.Load() {
		g.release()
		return false
	}
	return true
}

// release drops a reference; the last one of a closing generation closes
// drained. (A reader that saw closing in acquire may take the count from
// 0 to 1 and back again: drainOnce closes drained once.)
func (g *generation) release() {
	if g.refs.Add(-1) == 0 {
		g.drainOnce.Do(func() { close(g.drained) })
	}
}

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
	if !g.closing.Swap(true) {
		g.release() // the generation's own reference
	}
	<-g.drained
}
