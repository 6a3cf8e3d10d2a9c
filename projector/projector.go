package projector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel/trace"

	"github.com/lookup/persons/internal/crash"
)

// ErrStreamNotFound is returned (wrapped, naming the stream) by Run when the
// server answers that the source stream does not exist.
var ErrStreamNotFound = errors.New("source stream not found")

// ErrStreamMismatch is returned (wrapped) by Run when the store was projected
// from another stream than the one found: a stream of another name, the same
// stream deleted and created again (another creation time), or a stream
// whose last sequence is below the store's checkpoint. The error names the
// stream, the identity recorded in the store and what was found. Nothing is
// skipped nor projected over the old state: the operator rebuilds the read
// model into a new data directory (`lookupd project --until-caught-up`).
var ErrStreamMismatch = errors.New("read model does not belong to this stream")

// Config configures a Projector. Zero fields take their defaults.
type Config struct {
	// Stream is the source stream. Default "PERSONS".
	Stream string
	// DLQStream is the dead-letter stream, subjects "dlq.persons.>", created
	// with DLQStreamConfig if missing at start, and again if it is deleted
	// while the projector runs. Default "PERSONS_DLQ".
	// An invalid event is copied to "dlq." + its subject; if an existing
	// DLQStream does not take that subject, the copy fails and projection
	// waits (retrying, logging) rather than skip the event.
	DLQStream string
	// BatchSize is the maximum number of events per Badger transaction.
	// Default 1000.
	BatchSize int
	// Logger receives operational messages; never personal data. nil: discard.
	Logger *slog.Logger
	// RefreshInterval is how often the stream's state is polled for
	// Progress (StreamLastSeq, Connected). Default 2s.
	RefreshInterval time.Duration
	// ObserveVisible, when set, is called for each event of each committed
	// batch with the time from its stream timestamp to the commit that made
	// it visible (the publish-to-visible latency). It must be cheap.
	ObserveVisible func(time.Duration)
	// Tracer, when set, records a span for each committed batch, linked to
	// the trace of each event that carries one (Event.TraceParent). nil: no
	// spans, no cost.
	Tracer trace.Tracer
}

// Progress is a consistent snapshot of a Projector's state for operators.
type Progress struct {
	AppliedSeq    uint64 // checkpoint: last stream sequence processed (applied, skipped or dead-lettered)
	StreamLastSeq uint64 // the stream's last sequence as last seen (lag = StreamLastSeq - AppliedSeq)
	TargetSeq     uint64 // stream last sequence when Run first reached the server (caught-up target)
	Applied       uint64 // events applied since process start
	Skipped       uint64 // stale or duplicate events skipped since process start
	// DeadLettered counts the invalid events this process has passed to the
	// DLQ since it started: one per invalid event it processed, whether it
	// published the copy or found it already there (copied by another
	// replica or an earlier run). Every replica counts the same invalid
	// events, and a rebuild counts them again; the DLQ holds each once.
	DeadLettered  uint64
	LastEventTime time.Time // stream timestamp of the last processed message (zero if none)
	CaughtUp      bool      // AppliedSeq has reached TargetSeq
	Connected     bool      // whether the projector currently reaches the stream
	// OldestUnappliedTime is the stream timestamp of the first message
	// beyond AppliedSeq, as looked up at the last refresh (every
	// RefreshInterval); zero when there is none or it is not known yet.
	OldestUnappliedTime time.Time
	// UnreachableSince is when the projector lost the stream, or, when the
	// stream is a mirror, when the mirror lost its origin
	// (MirrorCutOffSince), whichever is earlier; zero while both are
	// reached. The staleness bound compares it with the bound.
	UnreachableSince time.Time
	// MirrorOf is the stream the stream read mirrors, "" when it is not a
	// mirror (as seen at the last refresh).
	MirrorOf string
	// MirrorCutOffSince is, for a mirror, since when it has been out of
	// step with its origin: cut off from it, or copying the backlog of an
	// outage (observeMirror); zero while in step or for a stream that is
	// not a mirror. Updated every RefreshInterval.
	MirrorCutOffSince time.Time
	// MirrorLag is the mirror's lag behind its origin in messages as the
	// server last reported it (meaningful only while the link is up).
	MirrorLag uint64
}

// Projector applies the events of a JetStream stream to a Store.
//
// It reads the stream with an ordered consumer (jetstream.OrderedConsumer)
// starting at the store's checkpoint + 1, rather than with a durable
// consumer. An ordered consumer is an ephemeral, flow-controlled consumer
// without acknowledgements that the client recreates on any gap or failure
// from the last sequence it delivered. So a replica's position in the stream
// lives only in its own store, next to the data it describes (the
// checkpoint, committed in the same transaction): the server keeps no
// durable state per replica, replicas can be added and removed freely, and a
// replica that disappears leaves nothing behind on the server (its ephemeral
// consumer expires). Acknowledgements would add a round trip per message and
// buy nothing, since the checkpoint is the acknowledgement.
type Projector struct {
	js     jetstream.JetStream
	store  *Store
	cfg    Config
	logger *slog.Logger

	caughtUp     chan struct{}
	caughtUpOnce sync.Once
	streamGone   chan struct{} // the refresh loop saw the stream deleted or replaced
	reached      atomic.Bool   // the last attempt to reach the stream succeeded
	// unreachableSince is when the projector last lost the stream (unix
	// nanoseconds), 0 while it reaches it.
	unreachableSince atomic.Int64
	pos              Position // the committed checkpoint, for readers (Position)
	// hold, while set, is closed by Resume: the session applies nothing
	// until then (Pause).
	hold atomic.Pointer[chan struct{}]

	mu   sync.Mutex
	prog Progress
	// targetSet: TargetSeq has been taken (first time Run reached the server).
	targetSet bool
	// ident is the identity of the stream read (for a mirror, the mirror's
	// own, not its origin's), zero until checkIdentity has passed: the
	// stream replaced under the projector has another.
	ident streamIdentity
	// link is the state of the mirror's link to its origin when the stream
	// read is a mirror (mirror.go).
	link mirrorLink
	// oldest is the first unapplied message as last looked up.
	oldest oldest

	// pullMax is the client-side buffer of the ordered consumer.
	pullMax int
	// decoders is the number of goroutines decoding events.
	decoders int
	// resetAttempts is the ordered consumer's MaxResetAttempts.
	resetAttempts int
	// itemsBuf is process's reusable batch buffer (session goroutine only).
	itemsBuf []item

	hooks testHooks // the tests' (hooks.go); none in production
}

// New returns a Projector that applies the stream described by cfg to s. It
// does nothing until Run.
func New(js jetstream.JetStream, s *Store, cfg Config) *Projector {
	return newProjector(js, s, cfg)
}

// newProjector is New with the test hooks that opts set.
func newProjector(js jetstream.JetStream, s *Store, cfg Config, hooks ...option) *Projector {
	if cfg.Stream == "" {
		cfg.Stream = "PERSONS"
	}
	if cfg.DLQStream == "" {
		cfg.DLQStream = "PERSONS_DLQ"
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1000
	}
	if cfg.RefreshInterval <= 0 {
		cfg.RefreshInterval = 2 * time.Second
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	p := &Projector{js: js, store: s, cfg: cfg, logger: logger.With("component", "projector", "stream", cfg.Stream),
		caughtUp: make(chan struct{}), streamGone: make(chan struct{}, 1), pullMax: 2000, resetAttempts: 5, decoders: max(runtime.GOMAXPROCS(0), 1),
		hooks: newTestHooks(hooks)}
	if seq, ts, err := s.checkpoint(); err == nil {
		p.prog.AppliedSeq, p.prog.LastEventTime = seq, ts
		p.pos.advance(seq)
	}
	return p
}

// CaughtUp is closed once the applied sequence has reached the stream's last
// sequence as it stood when Run first reached the server (immediately then if
// the stream was empty or the checkpoint already covered it), or once the
// projector has seen that no message is pending for it.
func (p *Projector) CaughtUp() <-chan struct{} { return p.caughtUp }

// Position returns the read model's applied position: the stream sequence
// of the last event committed, advanced at each commit.
func (p *Projector) Position() *Position { return &p.pos }

// Pause stops the projector applying events, after the batch it may be
// committing, until Resume. It goes on reading the stream's state, so
// Progress shows the lag and the staleness bound applies: a test server
// (lookuptest) pauses it to answer position-not-reached and stale on
// purpose. Pausing a paused projector does nothing; Run still returns
// when its context is done.
func (p *Projector) Pause() {
	ch := make(chan struct{})
	p.hold.CompareAndSwap(nil, &ch)
}

// Resume lets a paused projector apply events again; it does nothing to
// one that is not paused.
func (p *Projector) Resume() {
	if ch := p.hold.Swap(nil); ch != nil {
		close(*ch)
	}
}

// held waits while the projector is paused, and reports false if ctx is
// done first.
func (p *Projector) held(ctx context.Context) bool {
	ch := p.hold.Load()
	if ch == nil {
		return true
	}
	select {
	case <-*ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// Progress returns a consistent snapshot of the projector's state.
func (p *Projector) Progress() Progress {
	p.mu.Lock()
	pr := p.prog
	pr.OldestUnappliedTime = p.oldestUnapplied()
	pr.MirrorOf, pr.MirrorCutOffSince, pr.MirrorLag = p.link.origin, p.link.cutSince, p.link.lag
	p.mu.Unlock()
	pr.Connected = p.reached.Load() && p.js.Conn().IsConnected()
	if since := p.unreachableSince.Load(); since != 0 {
		pr.UnreachableSince = time.Unix(0, since)
	} else if !pr.Connected {
		pr.UnreachableSince = time.Now() // just lost: not yet seen by the refresh
	}
	if cut := pr.MirrorCutOffSince; !cut.IsZero() && (pr.UnreachableSince.IsZero() || cut.Before(pr.UnreachableSince)) {
		pr.UnreachableSince = cut
	}
	return pr
}

// Run projects the stream until ctx is done, then returns nil: a batch being
// committed is finished, a batch waiting for a retry is abandoned (it is not
// in the store and is read again on the next Run).
//
// Run returns an error wrapping ErrStreamNotFound, naming the stream, when
// the server answers that the source stream does not exist; one wrapping
// ErrStreamMismatch when the store belongs to another stream or another
// incarnation of it, or its checkpoint is beyond the stream's last
// sequence (checked each time Run reaches the stream; a fresh store records
// the stream's identity at first contact); and an error when the checkpoint
// cannot be read at start. When NATS is unreachable or
// times out it does not return: it logs, retries with backoff and resumes
// from the checkpoint. Invalid events are copied to the dead-letter stream
// (the copy acknowledged before the checkpoint passes them) and projection
// goes on. Store failures are retried with backoff, never skipped.
//
// Run must not be called concurrently with itself, and only one Projector
// may write to a Store.
func (p *Projector) Run(ctx context.Context) error {
	applied, ts, err := p.store.checkpoint()
	if err != nil {
		return fmt.Errorf("projector: %w", err)
	}
	p.mu.Lock()
	p.prog.AppliedSeq, p.prog.LastEventTime = applied, ts
	p.mu.Unlock()
	p.pos.advance(applied)
	// A rebuild from zero makes the signer sets once it has caught up
	// (finishRebuild), not at every event.
	if err := p.store.deferSetsIfEmpty(); err != nil {
		return fmt.Errorf("projector: %w", err)
	}

	refreshCtx, stopRefresh := context.WithCancel(ctx)
	var refreshWG sync.WaitGroup
	defer func() {
		stopRefresh()
		refreshWG.Wait()
	}()

	bo := newBackoff()
	dlqReady, refreshing := false, false
	for {
		stream, err := p.lookUpStream(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("projector: %w: %q", ErrStreamNotFound, p.cfg.Stream)
		}
		if errors.Is(err, ErrStreamMismatch) || errors.Is(err, ErrUnsupportedStream) {
			return fmt.Errorf("projector: %w", err)
		}
		if err == nil && !dlqReady {
			if err = p.ensureDLQ(ctx); err == nil {
				dlqReady = true
			}
		}
		if err == nil {
			if !refreshing {
				refreshing = true
				refreshWG.Add(1)
				go func() { defer refreshWG.Done(); defer crash.Guard(); p.refreshLoop(refreshCtx, stream) }()
			}
			err = p.session(ctx, stream, bo)
			if ctx.Err() != nil {
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil // a clean shutdown, whatever step it interrupted
		}
		p.setReached(false)
		d := bo.NextBackOff()
		p.logger.Warn("stream unavailable, retrying", "err", err, "retry_in", d)
		if !sleep(ctx, d) {
			return nil
		}
	}
}
