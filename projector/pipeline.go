package projector

import (
	"fmt"
	"sync"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/crash"
	"github.com/nats-io/nats.go/jetstream"
)

// startPipeline starts the goroutines that read and decode the messages of
// iter; the decoded chunks arrive on ordered, in stream order. stop ends
// them.
func (p *Projector) startPipeline(iter jetstream.MessagesContext) (ordered <-chan *chunk, stop func()) {
	done := make(chan struct{})
	raw := make(chan msgItem, p.pullMax)
	work := make(chan *chunk, p.decoders*2)
	ord := make(chan *chunk, 2*p.cfg.BatchSize/chunkSize+p.decoders*2)
	var wg sync.WaitGroup
	wg.Add(1 + p.decoders)
	// The reader is not waited for: while the ordered consumer recreates
	// itself, Stop blocks (it takes the consumer's lock) and Next too. It
	// ends on its own once Next returns, seeing done closed.
	go func() { defer crash.Guard(); p.read(iter, raw, done) }()
	go func() { defer wg.Done(); defer crash.Guard(); chunker(raw, work, ord, done) }()
	for range p.decoders {
		go func() {
			defer wg.Done()
			defer crash.Guard()
			for c := range work {
				p.decodeChunk(c)
			}
		}()
	}
	return ord, func() {
		close(done)
		go func() { defer crash.Guard(); iter.Stop() }()
		wg.Wait()
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
		if err == nil {
			err = p.hooks.read(md.Sequence.Stream)
		}
		if err != nil {
			c.items, c.err = c.items[:i], fmt.Errorf("read stream: message metadata: %w", err)
			return
		}
		m.seq, m.time, m.pending, m.cseq = md.Sequence.Stream, md.Timestamp, md.NumPending, md.Sequence.Consumer
		m.ev, m.decErr = events.DecodeMsg(m.msg.Subject(), m.msg.Headers(), m.msg.Data())
		m.valid = m.decErr == nil
	}
}
