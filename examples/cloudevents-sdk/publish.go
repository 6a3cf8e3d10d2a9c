// Package cloudeventssdk shows how an upstream Go service publishes the
// lookup service's events through the official CloudEvents Go SDK
// (github.com/cloudevents/sdk-go/v2 and its JetStream binding,
// protocol/nats_jetstream/v2), in binary content mode (the SDK's default)
// or in structured mode, and holds the conformance test that proves
// lookupd applies both exactly as the events its own events.Publisher
// writes. It is a module of its own, so that the service's go.mod does
// not carry the SDK.
//
// Files: publish.go (Publish), sdk_test.go (the conformance test).
package cloudeventssdk

import (
	"context"
	"fmt"

	cejsm "github.com/cloudevents/sdk-go/protocol/nats_jetstream/v2"
	cloudevents "github.com/cloudevents/sdk-go/v2"
	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/nats-io/nats.go"
)

// Publish sends one event of the v1 contract (docs/events.md) through the
// CloudEvents SDK on conn to the stream (PERSONS), on the entity's
// subject, in binary content mode unless structured is true.
//
// entityVersion is the entity's version; data is the event's data object,
// marshalled as JSON by the SDK. The SDK's JetStream sender publishes on
// one subject, so a sender is made for the subject of each event.
func Publish(ctx context.Context, conn *nats.Conn, stream, subject string, e cloudevents.Event, structured bool) error {
	sender, err := cejsm.NewSenderFromConn(conn, stream, subject, nil)
	if err != nil {
		return fmt.Errorf("cloudevents sender: %w", err)
	}
	defer sender.Close(ctx)
	c, err := cloudevents.NewClient(sender)
	if err != nil {
		return err
	}
	if structured {
		ctx = binding.WithForceStructured(ctx)
	}
	if res := c.Send(ctx, e); cloudevents.IsUndelivered(res) {
		return fmt.Errorf("send %s: %w", e.ID(), res)
	}
	return nil
}

// NewEvent builds the CloudEvent of the v1 contract: the type
// (persons.consumer.upserted.v1, ...), its id and source, the entity's
// version as the entityversion extension, and data as JSON.
func NewEvent(typ, id, source string, entityVersion int32, data any) (cloudevents.Event, error) {
	e := cloudevents.NewEvent()
	e.SetType(typ)
	e.SetID(id)
	e.SetSource(source)
	e.SetExtension("entityversion", entityVersion)
	if err := e.SetData(cloudevents.ApplicationJSON, data); err != nil {
		return e, err
	}
	return e, e.Validate()
}
