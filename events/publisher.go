package events

import (
	"context"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Publisher publishes events of the v1 contract to JetStream for upstream Go
// services. It is safe for concurrent use.
type Publisher struct {
	js   jetstream.JetStream
	mode ContentMode
}

// ContentMode is how a message carries an event, as the CloudEvents NATS
// protocol binding defines the two: lookupd reads both, mixed in one
// stream.
type ContentMode int

const (
	// Structured: the whole event as one JSON body (Encode), the default.
	Structured ContentMode = iota
	// Binary: the attributes as ce- headers, the data alone as the body
	// (EncodeBinary), as the CloudEvents SDKs publish by default.
	Binary
)

// PublisherOption configures a Publisher.
type PublisherOption func(*Publisher)

// WithContentMode makes the Publisher publish in mode m (Structured when
// not given).
func WithContentMode(m ContentMode) PublisherOption {
	return func(p *Publisher) { p.mode = m }
}

// NewPublisher returns a Publisher that publishes through js. The stream
// that holds persons.> (PERSONS by default) must exist; Publish fails
// otherwise (jetstream.ErrNoStreamResponse).
func NewPublisher(js jetstream.JetStream, opts ...PublisherOption) *Publisher {
	p := &Publisher{js: js}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Publish validates e (it encodes e and decodes the body against its own
// subject, so nothing invalid is ever published), publishes it on
// e.Subject() (with the ids lower-cased) with the Nats-Msg-Id header set to
// e.ID, waits for the PubAck and returns the stream sequence.
//
// A duplicate (the stream already holds a message with the same
// Nats-Msg-Id inside its duplicate window, PubAck.Duplicate) returns the
// sequence of the original message and no error, so a publisher that
// retries after a lost PubAck gets the same answer as the first time.
//
// It returns an error wrapping ErrUnknownData if e.Data is not one of the
// six data types, an *InvalidEventError (matching ErrInvalidEvent) if e
// breaks the v1 contract, and otherwise the error of JetStream (for example
// the context's error, or jetstream.ErrNoStreamResponse when no stream holds
// the subject).
func (p *Publisher) Publish(ctx context.Context, e Event) (uint64, error) {
	if e.TraceParent == "" {
		e.TraceParent = traceParentOf(ctx)
	}
	msg, err := newMsg(e, p.mode)
	if err != nil {
		return 0, fmt.Errorf("events: publish: %w", err)
	}
	ack, err := p.js.PublishMsg(ctx, msg)
	if err != nil {
		return 0, fmt.Errorf("events: publish %s event %s on %s: %w", e.Type, e.ID, msg.Subject, err)
	}
	return ack.Sequence, nil
}

// NewMsg returns the message Publish sends for e in structured mode, for a publisher that
// sends it another way (asynchronously, in bulk): e encoded and validated
// (decoded against its own subject), on e.Subject() with the ids
// lower-cased, with the Nats-Msg-Id header set to e.ID. Unlike Publish, it
// leaves e.TraceParent as it is. Its errors are those of Publish before
// anything is sent: ErrUnknownData, *InvalidEventError.
func NewMsg(e Event) (*nats.Msg, error) { return newMsg(e, Structured) }

// NewBinaryMsg is NewMsg in binary content mode: the attributes in ce-
// headers (EncodeBinary) beside Nats-Msg-Id, the data as the body.
func NewBinaryMsg(e Event) (*nats.Msg, error) { return newMsg(e, Binary) }

// newMsg returns the message of e in mode, validated.
func newMsg(e Event, mode ContentMode) (*nats.Msg, error) {
	var h nats.Header
	var body []byte
	var err error
	switch mode {
	case Binary:
		h, body, err = EncodeBinary(e)
	default:
		h = nats.Header{}
		body, err = Encode(e)
	}
	if err != nil {
		return nil, err
	}
	valid, err := DecodeMsg(e.Subject(), h, body)
	if err != nil {
		return nil, err
	}
	h.Set(jetstream.MsgIDHeader, e.ID)
	return &nats.Msg{Subject: valid.Subject(), Data: body, Header: h}, nil
}
