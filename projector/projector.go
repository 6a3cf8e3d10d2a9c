package projector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
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

// Headers set on every dead-lettered message. The body and the other headers
// of the original message are copied unchanged (except Nats-* headers, which
// belong to the server).
const (
	// HeaderDLQReason is the decoding error (events.InvalidEventError): the
	// invalid field and why. It quotes no personal data (at most ids, enum
	// values, envelope attributes and the subject), has control characters
	// replaced by spaces and is cut to 512 bytes.
	HeaderDLQReason = "Lookup-Dlq-Reason"
	// HeaderOriginalSubject is the subject the event was published on.
	HeaderOriginalSubject = "Lookup-Original-Subject"
	// HeaderOriginalStream is the stream the event was read from.
	HeaderOriginalStream = "Lookup-Original-Stream"
	// HeaderOriginalSequence is its sequence in that stream (decimal).
	HeaderOriginalSequence = "Lookup-Original-Sequence"
	// HeaderOriginalMsgID is the original Nats-Msg-Id, when there was one.
	HeaderOriginalMsgID = "Lookup-Original-Msg-Id"
)

// DLQSubjectPrefix is prepended to the original subject of a dead-lettered
// event.
const DLQSubjectPrefix = "dlq."

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

	mu   sync.Mutex
	prog Progress
	// targetSet: TargetSeq has been taken (first time Run reached the server).
	targetSet bool
	// ident is the identity of the stream the store is bound to (zero until
	// checkIdentity has passed).
	ident streamIdentity

	// afterCommit, when set (tests), is called after each committed batch with
	// the new checkpoint.
	afterCommit func(seq uint64)
	// pullMax is the client-side buffer of the ordered consumer.
	pullMax int
	// decoders is the number of goroutines decoding events.
	decoders int
	// resetAttempts is the ordered consumer's MaxResetAttempts.
	resetAttempts int
	// readFault, when set (tests), is called with each message's stream
	// sequence; an error fails the read there, as a broken consumer would.
	readFault func(seq uint64) error
	// ensureDLQHook, when set (tests), is called as ensureDLQ starts.
	ensureDLQHook func()
	// itemsBuf is process's reusable batch buffer (session goroutine only).
	itemsBuf []item
}

// New returns a Projector that applies the stream described by cfg to s. It
// does nothing until Run.
func New(js jetstream.JetStream, s *Store, cfg Config) *Projector {
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
		caughtUp: make(chan struct{}), streamGone: make(chan struct{}, 1), pullMax: 2000, resetAttempts: 5, decoders: max(runtime.GOMAXPROCS(0), 1)}
	if seq, ts, err := s.checkpoint(); err == nil {
		p.prog.AppliedSeq, p.prog.LastEventTime = seq, ts
	}
	return p
}

// CaughtUp is closed once the applied sequence has reached the stream's last
// sequence as it stood when Run first reached the server (immediately then if
// the stream was empty or the checkpoint already covered it), or once the
// projector has seen that no message is pending for it.
func (p *Projector) CaughtUp() <-chan struct{} { return p.caughtUp }

// Progress returns a consistent snapshot of the projector's state.
func (p *Projector) Progress() Progress {
	p.mu.Lock()
	pr := p.prog
	p.mu.Unlock()
	pr.Connected = p.reached.Load() && p.js.Conn().IsConnected()
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

	refreshCtx, stopRefresh := context.WithCancel(ctx)
	var refreshWG sync.WaitGroup
	defer func() {
		stopRefresh()
		refreshWG.Wait()
	}()

	bo := newBackoff()
	dlqReady, refreshing := false, false
	for {
		stream, err := p.reach(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) {
			return fmt.Errorf("projector: %w: %q", ErrStreamNotFound, p.cfg.Stream)
		}
		if errors.Is(err, ErrStreamMismatch) {
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
				go func() { defer refreshWG.Done(); p.refreshLoop(refreshCtx, stream) }()
			}
			err = p.session(ctx, stream, bo)
			if ctx.Err() != nil {
				return nil
			}
		}
		if ctx.Err() != nil {
			return nil // a clean shutdown, whatever step it interrupted
		}
		p.reached.Store(false)
		d := bo.next()
		p.logger.Warn("stream unavailable, retrying", "err", err, "retry_in", d)
		if !sleep(ctx, d) {
			return nil
		}
	}
}

// checkIdentity compares the stream found with the identity recorded in the
// store, recording it in a fresh store, and binds the store to it. It
// returns an error wrapping ErrStreamMismatch when they differ or the
// checkpoint is beyond the stream's last sequence.
func (p *Projector) checkIdentity(info *jetstream.StreamInfo) error {
	found := streamIdentity{name: info.Config.Name, created: info.Created}
	recorded, ok, err := p.store.streamIdentity()
	if err != nil {
		return err
	}
	cp, _, err := p.store.checkpoint()
	if err != nil {
		return err
	}
	mismatch := func(what string) error {
		return fmt.Errorf("%w: stream %q: %s; rebuild the read model into a new data dir with `lookupd project --until-caught-up`",
			ErrStreamMismatch, p.cfg.Stream, what)
	}
	switch {
	case !ok && cp > 0:
		return mismatch(fmt.Sprintf("the store has checkpoint %d but records no stream identity, found stream %s", cp, found))
	case ok && !recorded.equal(found):
		return mismatch(fmt.Sprintf("the store records stream %s (checkpoint %d), found stream %s", recorded, cp, found))
	case cp > info.State.LastSeq:
		return mismatch(fmt.Sprintf("the store's checkpoint %d is beyond the last sequence %d of stream %s", cp, info.State.LastSeq, found))
	}
	if err := p.store.bindStream(found, !ok); err != nil {
		return err
	}
	p.mu.Lock()
	p.ident = found
	p.mu.Unlock()
	return nil
}

// reach looks the stream up, checks that the store belongs to it (see
// checkIdentity), records its state and, the first time, the caught-up
// target.
func (p *Projector) reach(ctx context.Context) (jetstream.Stream, error) {
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := p.js.Stream(rctx, p.cfg.Stream)
	if err != nil {
		return nil, fmt.Errorf("look up stream %q: %w", p.cfg.Stream, err)
	}
	p.reached.Store(true)
	// Before observeStream: a store of another stream must not be reported
	// caught up.
	if err := p.checkIdentity(stream.CachedInfo()); err != nil {
		return nil, err
	}
	p.observeStream(stream.CachedInfo())
	return stream, nil
}

// observeStream records the stream's last sequence, and takes the caught-up
// target the first time.
func (p *Projector) observeStream(info *jetstream.StreamInfo) {
	if info == nil {
		return
	}
	last := info.State.LastSeq
	p.mu.Lock()
	if last > p.prog.StreamLastSeq {
		p.prog.StreamLastSeq = last
	}
	if !p.targetSet {
		p.targetSet = true
		p.prog.TargetSeq = last
	}
	caught := p.prog.AppliedSeq >= p.prog.TargetSeq
	p.mu.Unlock()
	if caught {
		p.markCaughtUp()
	}
}

func (p *Projector) markCaughtUp() {
	p.caughtUpOnce.Do(func() {
		p.mu.Lock()
		p.prog.CaughtUp = true
		seq := p.prog.AppliedSeq
		p.mu.Unlock()
		p.logger.Info("caught up with the stream", "applied_seq", seq)
		close(p.caughtUp)
	})
}

// refreshLoop polls the stream's state for Progress until ctx is done.
func (p *Projector) refreshLoop(ctx context.Context, stream jetstream.Stream) {
	t := time.NewTicker(p.cfg.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, p.cfg.RefreshInterval)
		info, err := stream.Info(rctx)
		cancel()
		replaced := false
		if err == nil {
			p.mu.Lock()
			id := p.ident
			p.mu.Unlock()
			replaced = id.name != "" && !id.equal(streamIdentity{name: info.Config.Name, created: info.Created})
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) || replaced {
			// The stream was deleted (or replaced): end the session (its
			// ordered consumer would retry forever), so that Run finds out
			// and returns.
			select {
			case p.streamGone <- struct{}{}:
			default:
			}
		}
		if err != nil {
			if ctx.Err() == nil {
				p.reached.Store(false)
			}
			continue
		}
		p.reached.Store(true)
		p.observeStream(info)
	}
}

// ensureDLQ creates the dead-letter stream if it does not exist.
func (p *Projector) ensureDLQ(ctx context.Context) error {
	if p.ensureDLQHook != nil {
		p.ensureDLQHook()
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := p.js.Stream(rctx, p.cfg.DLQStream)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("look up dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	cfg := DLQStreamConfig(p.cfg.DLQStream)
	if p.cfg.Stream != "PERSONS" {
		cfg.Description = strings.Replace(cfg.Description, "PERSONS", p.cfg.Stream, 1)
	}
	_, err = p.js.CreateStream(rctx, cfg)
	if err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	p.logger.Info("created dead-letter stream", "dlq_stream", p.cfg.DLQStream)
	return nil
}

// DLQStreamConfig returns the configuration with which the projector creates
// the dead-letter stream name when it is missing: the same as
// deploy/streams/persons_dlq.json (a test keeps them equal), except that the
// file's replica count is for operators to choose. Limits retention, file
// storage with S2 compression, at most a million messages, 1 GiB and 30
// days (the oldest discarded first), messages of at most 1 MiB, a
// two-minute duplicate window, direct gets allowed.
func DLQStreamConfig(name string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              name,
		Description:       "Events of PERSONS that broke contract v1, with the reason, original subject and sequence in headers",
		Subjects:          []string{DLQSubjectPrefix + events.SubjectRoot + ".>"},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      -1,
		MaxMsgs:           1_000_000,
		MaxBytes:          1 << 30,
		MaxAge:            30 * 24 * time.Hour,
		MaxMsgsPerSubject: -1,
		MaxMsgSize:        1 << 20,
		Discard:           jetstream.DiscardOld,
		Storage:           jetstream.FileStorage,
		Replicas:          1,
		Duplicates:        2 * time.Minute,
		AllowDirect:       true,
		Compression:       jetstream.S2Compression,
	}
}

// msgItem is what the reader goroutine hands the applier: a message (decoded
// or not) or the error that ended the reading.
type msgItem struct {
	item
	pending uint64 // messages pending after this one, per the server
	cseq    uint64 // consumer sequence: restarts at 1 when the ordered consumer is recreated
	msg     jetstream.Msg
	decErr  error // non-nil: invalid event, to be dead-lettered
	err     error // non-nil: the consumer failed; the session ends
}

// session consumes from checkpoint + 1 until the consumer fails or ctx is done.
//
// The pipeline: a reader goroutine takes messages from the consumer; a
// chunker groups what has arrived into chunks of up to chunkSize; decoders
// (one per CPU) parse the metadata and decode the events of each chunk in
// parallel; the session goroutine takes the chunks in stream order, waits
// for each to be decoded, and commits batches of up to BatchSize events.
func (p *Projector) session(ctx context.Context, stream jetstream.Stream, bo *backoff) error {
	p.mu.Lock()
	start := p.prog.AppliedSeq + 1
	p.mu.Unlock()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	cons, err := stream.OrderedConsumer(cctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   start,
		// The client recreates the consumer by itself a few times (about
		// 25 s of backoff); after that the session ends and Run takes over:
		// it checks that the stream exists and recreates the consumer from
		// the checkpoint, with its own backoff, forever.
		MaxResetAttempts: p.resetAttempts,
	})
	cancel()
	if err != nil {
		return fmt.Errorf("create ordered consumer from sequence %d: %w", start, err)
	}
	iter, err := cons.Messages(jetstream.PullMaxMessages(p.pullMax))
	if err != nil {
		return fmt.Errorf("consume from sequence %d: %w", start, err)
	}
	if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
		// Nothing left to deliver after the checkpoint (the stream's last
		// messages may have been deleted): caught up.
		p.markCaughtUp()
	}
	p.logger.Info("consuming", "from_seq", start)

	done := make(chan struct{})
	raw := make(chan msgItem, p.pullMax)
	work := make(chan *chunk, p.decoders*2)
	ordered := make(chan *chunk, 2*p.cfg.BatchSize/chunkSize+p.decoders*2)
	var wg sync.WaitGroup
	wg.Add(1 + p.decoders)
	// The reader is not waited for: while the ordered consumer recreates
	// itself, Stop blocks (it takes the consumer's lock) and Next too. It
	// ends on its own once Next returns, seeing done closed.
	go p.read(iter, raw, done)
	go func() { defer wg.Done(); chunker(raw, work, ordered, done) }()
	for range p.decoders {
		go func() {
			defer wg.Done()
			for c := range work {
				p.decodeChunk(c)
			}
		}()
	}
	defer func() {
		close(done)
		go iter.Stop()
		wg.Wait()
	}()

	batch := make([]msgItem, 0, p.cfg.BatchSize)
	lastSeen := start - 1
	var lastCSeq uint64
	for {
		clear(batch)
		batch = batch[:0]
		var c *chunk
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-p.streamGone:
			return fmt.Errorf("stream %q no longer found", p.cfg.Stream)
		case c = <-ordered:
		}
		var readErr error
		for {
			<-c.done
			batch = append(batch, c.items...)
			if c.err != nil {
				readErr = c.err
				break
			}
			c.release() // after the last use of c: the chunker may reuse it at once
			if len(batch)+chunkSize > p.cfg.BatchSize {
				break
			}
			select {
			case c = <-ordered:
				continue
			default:
			}
			break
		}
		for rest := batch; len(rest) > 0; {
			n := min(len(rest), p.cfg.BatchSize)
			if err := p.checkNotReplaced(ctx, rest[:n], &lastCSeq); err != nil {
				return err
			}
			if err := p.process(ctx, rest[:n], &lastSeen); err != nil {
				return err
			}
			rest = rest[n:]
			bo.reset()
		}
		if readErr != nil {
			return readErr
		}
	}
}

// chunkSize is the number of messages decoded as one unit of work.
const chunkSize = 64

// chunk is a run of consecutive messages, decoded by one decoder; done is
// closed when they are. err, when set, is the error that ended the reading,
// after the messages of the chunk.
type chunk struct {
	items []msgItem
	err   error
	done  chan struct{}
}

// read runs in its own goroutine: it hands the consumer's messages on,
// until the iterator fails (the error is handed on last) or done is closed.
func (p *Projector) read(iter jetstream.MessagesContext, raw chan<- msgItem, done <-chan struct{}) {
	for {
		msg, err := iter.Next()
		m := msgItem{msg: msg}
		if err != nil {
			m.err = fmt.Errorf("read stream: %w", err)
		}
		select {
		case raw <- m:
		case <-done:
			return
		}
		if m.err != nil {
			return
		}
	}
}

// chunker groups the messages that have arrived into chunks, sends each to
// the decoders and, in stream order, to the session. It closes work when
// done.
func chunker(raw <-chan msgItem, work, ordered chan<- *chunk, done <-chan struct{}) {
	defer close(work)
	for {
		c := chunkPool.Get().(*chunk)
		c.done = make(chan struct{})
		select {
		case m := <-raw:
			c.add(m)
		case <-done:
			return
		}
	fill:
		for c.err == nil && len(c.items) < chunkSize {
			select {
			case m := <-raw:
				c.add(m)
			default:
				break fill
			}
		}
		ended := c.err != nil // read before the decoders own c
		select {
		case ordered <- c:
		case <-done:
			return
		}
		select {
		case work <- c:
		case <-done:
			return
		}
		if ended {
			return
		}
	}
}

// chunkPool recycles chunks (and their item arrays) to spare the garbage
// collector.
var chunkPool = sync.Pool{New: func() any { return &chunk{items: make([]msgItem, 0, chunkSize)} }}

// release returns c to the pool once its items have been copied out.
func (c *chunk) release() {
	clear(c.items) // drop references to messages and events
	c.items = c.items[:0]
	chunkPool.Put(c)
}

func (c *chunk) add(m msgItem) {
	if m.err != nil {
		c.err = m.err
		return
	}
	c.items = append(c.items, m)
}

// decodeChunk reads the metadata and decodes the events of c. A message
// whose metadata cannot be read ends the chunk with an error: the session
// restarts from the checkpoint.
func (p *Projector) decodeChunk(c *chunk) {
	defer close(c.done)
	for i := range c.items {
		m := &c.items[i]
		md, err := m.msg.Metadata()
		if err == nil && p.readFault != nil {
			err = p.readFault(md.Sequence.Stream)
		}
		if err != nil {
			c.items, c.err = c.items[:i], fmt.Errorf("read stream: message metadata: %w", err)
			return
		}
		m.seq, m.time, m.pending, m.cseq = md.Sequence.Stream, md.Timestamp, md.NumPending, md.Sequence.Consumer
		m.ev, m.decErr = events.Decode(m.msg.Subject(), m.msg.Data())
		m.valid = m.decErr == nil
	}
}

// checkNotReplaced guards against a stream deleted and created again under
// the session: the ordered consumer then recreates itself on the new stream
// and delivers its messages. For the session's first batch, and whenever the
// consumer sequence of batch does not follow on from the previous one (the
// consumer was recreated), it checks, before anything of batch is committed, that the stream is still the one
// the store is bound to; if not it returns an error, ending the session, and
// Run finds the mismatch.
func (p *Projector) checkNotReplaced(ctx context.Context, batch []msgItem, lastCSeq *uint64) error {
	recreated := false
	for i := range batch {
		if *lastCSeq == 0 || batch[i].cseq != *lastCSeq+1 { // first batch of the session, or a reset
			recreated = true
		}
		*lastCSeq = batch[i].cseq
	}
	if !recreated {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := p.js.Stream(rctx, p.cfg.Stream)
	if err != nil {
		return fmt.Errorf("check stream after consumer reset: %w", err)
	}
	info := stream.CachedInfo()
	p.mu.Lock()
	id := p.ident
	p.mu.Unlock()
	if !id.equal(streamIdentity{name: info.Config.Name, created: info.Created}) {
		return fmt.Errorf("stream %q was replaced", p.cfg.Stream)
	}
	return nil
}

// process dead-letters the invalid events of batch, then applies it, retrying
// with backoff until it succeeds or ctx is done. lastSeen guards against a
// message delivered twice within a session.
func (p *Projector) process(ctx context.Context, batch []msgItem, lastSeen *uint64) error {
	items := p.itemsBuf[:0]
	var last msgItem
	for i := range batch {
		m := &batch[i]
		if m.seq <= *lastSeen {
			continue
		}
		*lastSeen = m.seq
		if m.decErr != nil {
			if err := p.deadLetter(ctx, m); err != nil {
				return err
			}
		}
		items = append(items, m.item)
		last = *m
	}
	full := items
	defer func() { clear(full); p.itemsBuf = full[:0] }()
	if len(items) == 0 {
		return nil
	}
	bo := newBackoff()
	for {
		st, err := p.store.applyBatch(items)
		if err == nil {
			p.committed(items[len(items)-1], st, last.pending)
			return nil
		}
		p.logger.Error("store write failed, retrying", "err", err, "first_seq", items[0].seq)
		// Part of the batch may have been committed: resume after the checkpoint.
		if cp, _, cerr := p.store.checkpoint(); cerr == nil {
			for len(items) > 0 && items[0].seq <= cp {
				items = items[1:]
			}
			if st != (batchStats{}) {
				p.committed(item{seq: cp}, st, last.pending+uint64(len(items)))
			}
			if len(items) == 0 {
				return nil
			}
		}
		if !sleep(ctx, bo.next()) {
			return ctx.Err()
		}
	}
}

// committed records a committed batch ending at last in the progress.
func (p *Projector) committed(last item, st batchStats, pending uint64) {
	p.mu.Lock()
	p.prog.AppliedSeq = last.seq
	if !last.time.IsZero() {
		p.prog.LastEventTime = last.time
	}
	if end := last.seq + pending; end > p.prog.StreamLastSeq {
		p.prog.StreamLastSeq = end
	}
	p.prog.Applied += st.applied
	p.prog.Skipped += st.skipped
	p.prog.DeadLettered += st.deadLettered
	caught := p.targetSet && (p.prog.AppliedSeq >= p.prog.TargetSeq || pending == 0)
	p.mu.Unlock()
	if caught {
		p.markCaughtUp()
	}
	if p.afterCommit != nil {
		p.afterCommit(last.seq)
	}
}

// deadLetter copies an invalid message to the DLQ stream and waits for the
// server's acknowledgement, retrying with backoff until it succeeds or ctx
// is done.
//
// Every replica reads the whole stream, and a replica re-reads events after
// a crash, so the same invalid event is dead-lettered many times over; it
// must land in the DLQ once. Two guards: the Nats-Msg-Id is derived from the
// source stream and sequence, so the DLQ's duplicate window (two minutes by
// default) drops copies published close together; and before publishing,
// the last DLQ message on the same subject is looked up: every projector
// dead-letters in stream order, so if that message comes from this stream at
// this sequence or later, this event is already in the DLQ (until an
// operator purges the DLQ) and is not published again.
func (p *Projector) deadLetter(ctx context.Context, m *msgItem) error {
	reason := strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' ' // no control characters (CR, LF) in a header
		}
		return r
	}, m.decErr.Error())
	if len(reason) > 512 {
		reason = strings.ToValidUTF8(reason[:512], "")
	}
	out := nats.NewMsg(DLQSubjectPrefix + m.msg.Subject())
	out.Data = m.msg.Data()
	for k, vs := range m.msg.Headers() {
		if strings.HasPrefix(k, "Nats-") {
			continue
		}
		for _, v := range vs {
			out.Header.Add(k, v)
		}
	}
	if id := m.msg.Headers().Get(jetstream.MsgIDHeader); id != "" {
		out.Header.Set(HeaderOriginalMsgID, id)
	}
	out.Header.Set(HeaderDLQReason, reason)
	out.Header.Set(HeaderOriginalSubject, m.msg.Subject())
	out.Header.Set(HeaderOriginalStream, p.cfg.Stream)
	out.Header.Set(HeaderOriginalSequence, strconv.FormatUint(m.seq, 10))
	msgID := p.cfg.Stream + ":" + strconv.FormatUint(m.seq, 10)

	bo := newBackoff()
	for {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		present, err := p.inDLQ(pctx, out.Subject, m.seq)
		if err == nil && present {
			cancel()
			p.logger.Debug("invalid event already dead-lettered", "seq", m.seq, "subject", m.msg.Subject())
			return nil
		}
		if err == nil {
			_, err = p.js.PublishMsg(pctx, out, jetstream.WithMsgID(msgID), jetstream.WithExpectStream(p.cfg.DLQStream))
		}
		cancel()
		if err == nil {
			p.logger.Warn("invalid event dead-lettered", "seq", m.seq, "subject", m.msg.Subject(), "reason", reason)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse) {
			// The DLQ stream was deleted while running: create it again.
			if cerr := p.ensureDLQ(ctx); cerr != nil {
				err = errors.Join(err, cerr)
			}
		}
		d := bo.next()
		p.logger.Error("dead-letter publish failed, retrying", "err", err, "seq", m.seq, "retry_in", d)
		if !sleep(ctx, d) {
			return ctx.Err()
		}
	}
}

// inDLQ reports whether the last DLQ message on dlqSubject is the copy of
// an event of this stream at sequence seq or later.
func (p *Projector) inDLQ(ctx context.Context, dlqSubject string, seq uint64) (bool, error) {
	dlq, err := p.js.Stream(ctx, p.cfg.DLQStream)
	if err != nil {
		return false, fmt.Errorf("look up dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	last, err := dlq.GetLastMsgForSubject(ctx, dlqSubject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read dead-letter stream %q: %w", p.cfg.DLQStream, err)
	}
	if last.Header.Get(HeaderOriginalStream) != p.cfg.Stream {
		return false, nil
	}
	got, err := strconv.ParseUint(last.Header.Get(HeaderOriginalSequence), 10, 64)
	return err == nil && got >= seq, nil
}

// backoff is exponential backoff from 50ms to 5s.
type backoff struct{ d time.Duration }

func newBackoff() *backoff { return &backoff{} }

func (b *backoff) next() time.Duration {
	switch {
	case b.d == 0:
		b.d = 50 * time.Millisecond
	case b.d < 5*time.Second:
		b.d = min(2*b.d, 5*time.Second)
	}
	return b.d
}

func (b *backoff) reset() { b.d = 0 }

// sleep waits d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
