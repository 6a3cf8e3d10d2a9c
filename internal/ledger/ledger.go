package ledger

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/crash"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
)

// Mode says what a Ledger guarantees.
type Mode string

// The modes of a Ledger.
const (
	// Required: Disclose returns only once JetStream has acknowledged every
	// record of the disclosure, and an error otherwise (the API then
	// answers 503 and discloses nothing).
	Required Mode = "required"
	// BestEffort: Disclose queues the records and returns at once; records
	// that cannot be stored are counted and logged.
	BestEffort Mode = "best-effort"
	// Off: nothing is recorded (development only).
	Off Mode = "off"
)

// ParseMode returns the Mode named s.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case Required, BestEffort, Off:
		return m, nil
	}
	return "", fmt.Errorf("audit mode %q: want required, best-effort or off", s)
}

// Config configures a Ledger.
type Config struct {
	Mode    Mode   // "" = Required
	Stream  string // "" = DefaultStream
	Replica string // this replica's name, recorded in each record; its chain's subject
	// Position returns the read model's position; nil = 0.
	Position   func() uint64
	Logger     *slog.Logger          // nil = discard
	Registerer prometheus.Registerer // metrics; nil = none
	Now        func() time.Time      // nil = time.Now
	// AckTimeout bounds the wait for the acknowledgement of a message;
	// 0 = 5s.
	AckTimeout time.Duration
	// QueueSize bounds the disclosures waiting to be published; 0 = 4096.
	QueueSize int
	// MaxInFlight bounds the messages sent and not yet acknowledged;
	// 0 = 4. (1 is group commit without pipelining.)
	MaxInFlight int
	// MaxMessageRecords and MaxMessageBytes bound a message; 0 = 256
	// persons (listed by the records of the disclosures it holds) and 56
	// KiB (the stream's largest message is 64 KiB). A disclosure of more
	// persons than fit is stored in several messages, a record in each.
	MaxMessageRecords int
	MaxMessageBytes   int
	// BatchMaxAge is how long a fast batch takes messages; 0 = 1s. It is
	// then ended once they are stored, and what waits goes in the next
	// one. A disclosure that comes while a batch is open, even an idle
	// one, is appended to it, which the server stores in about half the
	// time of the first message of a batch. Only a batch's first message
	// names the chain's last stored message (the server refuses it when
	// another writer has stored one since), so this also bounds how long
	// another writer under the same replica name goes unrefused. It must
	// be well under the server's batch timeout (max_batch_timeout, 10s by
	// default), after which the server forgets an idle batch.
	BatchMaxAge time.Duration
}

// withDefaults returns cfg with its zero fields set to their defaults.
func (cfg Config) withDefaults() Config {
	if cfg.Mode == "" {
		cfg.Mode = Required
	}
	if cfg.Stream == "" {
		cfg.Stream = DefaultStream
	}
	if cfg.Position == nil {
		cfg.Position = func() uint64 { return 0 }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AckTimeout <= 0 {
		cfg.AckTimeout = 5 * time.Second
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = 4096
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 4
	}
	if cfg.MaxMessageRecords <= 0 {
		cfg.MaxMessageRecords = 256
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 56 << 10
	}
	if cfg.BatchMaxAge <= 0 {
		cfg.BatchMaxAge = time.Second
	}
	return cfg
}

// ErrClosed is returned by Disclose once the Ledger is closed.
var ErrClosed = errors.New("audit: ledger closed")

// errQueueFull is returned (required) or counted (best-effort) when the
// queue of disclosures is full.
var errQueueFull = errors.New("audit: queue full")

// Ledger records disclosures in the audit stream (see the package doc). It
// implements query.Auditor and is safe for concurrent use.
type Ledger struct {
	cfg     Config
	js      jetstream.JetStream
	log     *slog.Logger
	metrics *metrics

	nc      *nats.Conn
	queue   chan *pending
	closing chan struct{} // closed by Close: no more disclosures
	abort   chan struct{} // closed when Close gives up: fail what is left
	done    chan struct{} // closed when the publisher has finished
	once    sync.Once
	abortMu sync.Once

	// ensured is set once the audit stream is known to exist; a stream
	// deleted later is not re-created (the records then fail). batched
	// says whether it allows fast batch publishing (see fastBatches).
	ensured atomic.Bool
	// ensureMu makes the start-up goroutine's ensure and the publisher's
	// one at a time: without it, the goroutine's look-up, still in flight
	// once the publisher had ensured the stream and stored records, could
	// find a stream deleted meanwhile missing and create it again.
	ensureMu sync.Mutex
	batched  atomic.Bool
	batches  *fastBatches
	// peakInFlight is the most messages in flight at once so far.
	peakInFlight atomic.Int64
}

// pending is one disclosure on its way: what was disclosed, when, and the
// read model's position then (the publisher writes its record, listing
// its persons, into the message that stores it, or into several when its
// persons do not fit in one), and where its outcome goes
// (buffered, so that nobody waits for a best-effort caller). Only the
// publisher touches settled.
type pending struct {
	d       events.Disclosure
	time    time.Time
	pos     uint64
	done    chan error
	settled bool
}

// settle reports err (nil: every record of p is stored) to p's caller,
// once.
func (p *pending) settle(err error) {
	if !p.settled {
		p.settled = true
		p.done <- err
	}
}

// records returns the number of persons p disclosed: what the bounds of
// a message and the metrics count (a person's disclosure, which format 2
// stored as a record of its own).
func (p *pending) records() int { return len(p.d.Persons) }

// New returns a Ledger publishing through nc, and starts it; Close stops
// it. With Mode Off it records nothing and needs no connection.
func New(nc *nats.Conn, cfg Config) (*Ledger, error) {
	cfg = cfg.withDefaults()
	if _, err := ParseMode(string(cfg.Mode)); err != nil {
		return nil, err
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	l := &Ledger{cfg: cfg, log: cfg.Logger, metrics: m, nc: nc,
		queue:   make(chan *pending, cfg.QueueSize),
		closing: make(chan struct{}), abort: make(chan struct{}), done: make(chan struct{})}
	if cfg.Mode == Off {
		close(l.done)
		return l, nil
	}
	if l.js, err = jetstream.New(nc); err != nil {
		return nil, fmt.Errorf("audit: jetstream: %w", err)
	}
	if l.batches, err = newFastBatches(nc); err != nil {
		return nil, err
	}
	go l.publish()
	go l.ensureStream()
	return l, nil
}

// ensureStream creates the audit stream at start if it is missing, as the
// projector does the DLQ, retrying while NATS is unreachable (until the
// Ledger is closed). The publisher also ensures it before its first
// record.
func (l *Ledger) ensureStream() {
	defer crash.Guard()
	for delay := 250 * time.Millisecond; !l.ensured.Load(); delay = min(2*delay, 8*time.Second) {
		err := l.ensure()
		if err == nil {
			return
		}
		l.log.Debug("audit stream not ensured yet; retrying", "err", err)
		select {
		case <-l.closing:
			return
		case <-time.After(delay):
		}
	}
}

// Mode returns the Ledger's mode.
func (l *Ledger) Mode() Mode { return l.cfg.Mode }

// Disclose records d: one record listing its persons (split over
// several messages when they do not fit in one). In Required mode it
// returns once all are stored, or the error that kept one from being
// stored (or ctx's); in BestEffort mode it returns nil at once.
func (l *Ledger) Disclose(ctx context.Context, d events.Disclosure) error {
	if l.cfg.Mode == Off || len(d.Persons) == 0 {
		return nil
	}
	p := l.newPending(d)
	if err := l.enqueue(ctx, p); err != nil {
		if l.cfg.Mode == BestEffort {
			l.failed(p.records(), err)
			return nil
		}
		return err
	}
	if l.cfg.Mode == BestEffort {
		return nil
	}
	select {
	case err := <-p.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-l.done: // closed: p was stored, or queued too late
		select {
		case err := <-p.done:
			return err
		default:
			return ErrClosed
		}
	}
}

// enqueue queues p for the publisher. A full queue is an error at once in
// best-effort mode; in required mode enqueue waits for room (or ctx).
func (l *Ledger) enqueue(ctx context.Context, p *pending) error {
	select {
	case <-l.closing:
		return ErrClosed
	default:
	}
	select {
	case l.queue <- p:
		return nil
	case <-l.closing:
		return ErrClosed
	default:
	}
	if l.cfg.Mode == BestEffort {
		return errQueueFull
	}
	select {
	case l.queue <- p:
		return nil
	case <-l.closing:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// newPending returns d on its way, disclosed now. It keeps a copy of d's
// persons: a best-effort caller has its answer before the records are
// written.
func (l *Ledger) newPending(d events.Disclosure) *pending {
	d.Persons = append([]events.DisclosedPerson(nil), d.Persons...)
	return &pending{d: d, time: l.cfg.Now().UTC(), pos: l.cfg.Position(), done: make(chan error, 1)}
}

// Close stops accepting disclosures and waits for those queued and in
// flight to be stored (their messages acknowledged). When ctx is done
// first, it fails those still waiting (their answers are not sent) and
// returns at once, with an error.
func (l *Ledger) Close(ctx context.Context) error {
	l.once.Do(func() { close(l.closing) })
	select {
	case <-l.done:
		return nil
	case <-ctx.Done():
	}
	l.abortMu.Do(func() { close(l.abort) })
	<-l.done // the publisher fails what is left and returns at once
	return fmt.Errorf("audit: records still unacknowledged at close, their answers failed: %w", ctx.Err())
}

// failed counts and logs records that could not be stored.
func (l *Ledger) failed(n int, err error) {
	l.metrics.records.WithLabelValues("failed").Add(float64(n))
	l.log.Error("audit records not stored", "records", n, "mode", string(l.cfg.Mode), "err", err)
}
