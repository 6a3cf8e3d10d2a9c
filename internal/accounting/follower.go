package accounting

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/periodic"
	"github.com/lookup/persons/projector"
)

// Backoff between attempts to follow the stream again after a failure
// (periodic.Backoff, as the projector's, with its jitter).
const (
	minRetry = 100 * time.Millisecond
	maxRetry = 5 * time.Second
)

// Follower keeps an Index following the audit stream for a long-running
// service (lookupd audit serve): Run follows it, and after a failure (NATS
// unreachable, the stream missing) tries again with backoff, resuming from
// the index's position, until its context ends. Its progress is what
// readiness and the metrics read (Progress, CaughtUp): it has caught up
// once it has applied the stream as it stood when it first reached it.
type Follower struct {
	index  *Index
	js     jetstream.JetStream
	stream string
	log    *slog.Logger

	applied    atomic.Uint64 // the index's position
	streamLast atomic.Uint64 // the stream's last sequence, as last learned
	target     atomic.Uint64 // the stream's last sequence when first reached
	reached    atomic.Bool   // target is set
	up         atomic.Bool   // following now
	first      atomic.Int64  // the stream's first message's time (Unix nanoseconds; 0: not known)
	caughtUp   chan struct{}
	once       sync.Once
}

// NewFollower returns the follower of x on the audit stream named stream
// (logger nil: discard). It reads x's position now.
func NewFollower(x *Index, js jetstream.JetStream, stream string, logger *slog.Logger) (*Follower, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	pos, err := x.Position()
	if err != nil {
		return nil, err
	}
	f := &Follower{index: x, js: js, stream: stream, log: logger, caughtUp: make(chan struct{})}
	f.applied.Store(pos)
	return f, nil
}

// Run follows the stream until ctx is done, then returns nil; it returns
// an error only when the index has been closed under it. Any other
// failure (NATS, the stream, a write of the index) is logged and tried
// again.
func (f *Follower) Run(ctx context.Context) error {
	bo := periodic.Backoff(minRetry, maxRetry)
	for {
		before := f.applied.Load()
		err := f.index.follow(ctx, f.js, f.stream, f)
		f.up.Store(false)
		if ctx.Err() != nil {
			return nil //nolint:nilerr // stopped by ctx: any error is the cancellation's
		}
		if err != nil && f.index.db.IsClosed() {
			return err
		}
		if f.applied.Load() > before {
			bo.Reset() // it made progress: a new failure starts over
		}
		wait := bo.NextBackOff()
		f.log.Warn("following the audit stream failed; retrying", "audit_stream", f.stream, "err", err, "retry_in", wait.String())
		if !periodic.Sleep(ctx, wait) {
			return nil
		}
	}
}

// connected is told the stream's last sequence as a follow starts.
func (f *Follower) connected(applied, streamLast uint64, first time.Time) {
	f.up.Store(true)
	f.applied.Store(applied) // 0 again when the index was emptied for a new stream
	if !first.IsZero() {
		f.first.Store(first.UnixNano())
	}
	f.raiseLast(streamLast)
	if !f.reached.Load() {
		f.target.Store(streamLast)
		f.reached.Store(true)
	}
	if applied >= f.target.Load() {
		f.markCaughtUp(applied)
	}
}

// committed is told the sequence applied by a commit and the messages
// pending after it.
func (f *Follower) committed(applied, pending uint64) {
	f.applied.Store(applied)
	f.raiseLast(applied + pending)
	if pending == 0 || applied >= f.target.Load() {
		f.markCaughtUp(applied)
	}
}

// raiseLast raises the stream's last sequence known to seq.
func (f *Follower) raiseLast(seq uint64) {
	for {
		cur := f.streamLast.Load()
		if seq <= cur || f.streamLast.CompareAndSwap(cur, seq) {
			return
		}
	}
}

// markCaughtUp closes CaughtUp, once.
func (f *Follower) markCaughtUp(applied uint64) {
	f.once.Do(func() {
		f.log.Info("accounting index caught up", "applied_sequence", applied, "audit_stream", f.stream)
		close(f.caughtUp)
	})
}

// CaughtUp is closed once the index has applied the stream as it stood
// when the follower first reached it.
func (f *Follower) CaughtUp() <-chan struct{} { return f.caughtUp }

// Lag returns the messages of the stream the index has not applied, as
// far as the follower knows (the stream's last sequence is learned as a
// follow starts and from each message's pending count).
func (f *Follower) Lag() uint64 {
	applied, last := f.applied.Load(), f.streamLast.Load()
	if last <= applied {
		return 0
	}
	return last - applied
}

// Progress returns the follower's progress as readiness reads a
// projector's (admin.ReadinessSource): applied, stream last and target
// sequences, caught up, connected.
func (f *Follower) Progress() projector.Progress {
	p := projector.Progress{AppliedSeq: f.applied.Load(), StreamLastSeq: f.streamLast.Load(),
		TargetSeq: f.target.Load(), Connected: f.up.Load()}
	select {
	case <-f.caughtUp:
		p.CaughtUp = true
	default:
	}
	return p
}

// IndexStatus is how current the index is and how far back the ledger
// goes, as the officer's page shows it.
type IndexStatus struct {
	Applied, Lag uint64 // the stream sequence applied, and the messages after it
	CaughtUp     bool
	// LedgerSince is the time of the audit stream's first message (zero
	// when not known): older records have aged out of the stream (the
	// index may still hold those it applied before).
	LedgerSince time.Time
}

// Status returns the index's status as the follower knows it.
func (f *Follower) Status() IndexStatus {
	s := IndexStatus{Applied: f.applied.Load(), Lag: f.Lag(), CaughtUp: f.Progress().CaughtUp}
	if n := f.first.Load(); n != 0 {
		s.LedgerSince = time.Unix(0, n).UTC()
	}
	return s
}
