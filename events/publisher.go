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
	js jetstream.JetStream
}

// NewPublisher returns a Publisher that publishes through js. The stream
// that holds persons.> (PERSONS by default) must exist; Publish fails
// otherwise (jetstream.ErrNoStreamResponse).
func NewPublisher(js jetstream.JetStream) *Publisher {
	return &Publisher{js: js}
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
	msg, err := NewMsg(e)
	if err != nil {
		return 0, fmt.Errorf("events: publish: %w", err)
	}
	ack, err := p.js.PublishMsg(ctx, msg)
	if err != nil {
		return 0, fmt.Errorf("events: publish %s event %s on %s: %w", e.Type, e.ID, msg.Subject, err)
	}
	return ack.Sequence, nil
}

// NewMsg returns the message Publish sends for e, for a publisher that
// sends it another way (asynchronously, in bulk): e encoded and validated
// (decoded against its own subject), on e.Subject() with the ids
// lower-cased, with the Nats-Msg-Id header set to e.ID. Unlike Publish, it
// leaves e.TraceParent as it is. Its errors are those of Publish before
// anything is sent: ErrUnknownData, *InvalidEventError.
func NewMsg(e Event) (*nats.Msg, error) {
	body, err := Encode(e)
	if err != nil {
		return nil, err
	}
	valid, err := Decode(e.Subject(), body)
	if err != nil {
		return nil, err
	}
	return &nats.Msg{
		Subject: valid.Subject(),
		Data:    body,
		Header:  nats.Header{jetstream.MsgIDHeader: []string{e.ID}},
	}, nil
}
