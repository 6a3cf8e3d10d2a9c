package projector

import (
	"context"
	"sync"
	"sync/atomic"
)

// Position is the stream sequence of the last event the read model has
// applied (its checkpoint as committed), readable without a lock, with an
// event-driven wait for a sequence: each commit that advances it wakes the
// waiters by closing a channel and replacing it (no polling). It never
// decreases. The zero value is position 0, ready to use.
type Position struct {
	applied atomic.Uint64
	mu      sync.Mutex
	changed chan struct{} // closed and replaced at each advance; nil until a waiter needs one
}

// Applied returns the sequence of the last event applied.
func (p *Position) Applied() uint64 { return p.applied.Load() }

// Wait returns nil as soon as Applied() >= n, or ctx's error if ctx is done
// first. It costs one atomic load when n is already applied.
func (p *Position) Wait(ctx context.Context, n uint64) error {
	for {
		if p.applied.Load() >= n {
			return nil
		}
		p.mu.Lock()
		if p.changed == nil {
			p.changed = make(chan struct{})
		}
		ch := p.changed
		p.mu.Unlock()
		// advance stores before closing under mu: either this load sees the
		// new value, or ch is closed by an advance still to come.
		if p.applied.Load() >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// advance moves the position to seq if that is beyond it, and wakes the
// waiters.
func (p *Position) advance(seq uint64) {
	for {
		cur := p.applied.Load()
		if seq <= cur {
			return
		}
		if p.applied.CompareAndSwap(cur, seq) {
			break
		}
	}
	p.mu.Lock()
	if p.changed != nil {
		close(p.changed)
		p.changed = nil
	}
	p.mu.Unlock()
}
