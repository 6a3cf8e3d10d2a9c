package dlq

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// env is an in-process NATS server with JetStream on a random port, the
// PERSONS stream (with a ten-minute duplicate window, as deployed) and the
// dead-letter stream, all gone when the test ends.
type env struct {
	js     jetstream.JetStream
	source jetstream.Stream
	dlq    jetstream.Stream
}

func newEnv(t *testing.T) *env {
	t.Helper()
	_, js := testkit.StartNATS(t)
	ctx := t.Context()
	source, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "PERSONS", Subjects: []string{events.SubjectRoot + ".>"}, Duplicates: 10 * time.Minute,
	})
	if err != nil {
		t.Fatalf("create PERSONS: %v", err)
	}
	dlq, err := js.CreateStream(ctx, projector.DLQStreamConfig(DefaultStream))
	if err != nil {
		t.Fatalf("create DLQ: %v", err)
	}
	return &env{js: js, source: source, dlq: dlq}
}

// validEvent returns a valid consumer event, its subject and its body.
func validEvent(t *testing.T) (events.Event, string, []byte) {
	t.Helper()
	ev, err := events.NewEvent("urn:test", 1, events.Consumer{
		ConsumerID: uuid.NewString(), BusinessID: uuid.NewString(), FirstName: "Ada", LastName: "Lovelace",
	})
	if err != nil {
		t.Fatal(err)
	}
	body, err := events.Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	return ev, ev.Subject(), body
}

// publishRaw publishes body on subject with headers h to PERSONS and
// returns its sequence.
func (e *env) publishRaw(t *testing.T, subject string, body []byte, h nats.Header) uint64 {
	t.Helper()
	m := nats.NewMsg(subject)
	m.Data = body
	for k, vs := range h {
		m.Header[k] = vs
	}
	ack, err := e.js.PublishMsg(t.Context(), m)
	if err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
	return ack.Sequence
}

// project runs the real projector over PERSONS until it has caught up, so
// that it dead-letters the invalid events as in production.
func (e *env) project(t *testing.T) {
	t.Helper()
	store, err := projector.Open(t.TempDir(), projector.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	p := projector.New(e.js, store, projector.Config{Stream: "PERSONS"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx) }()
	select {
	case <-p.CaughtUp():
	case err := <-done:
		t.Fatalf("projector stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("projector not caught up after 30s")
	}
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("projector: %v", err)
	}
}

// deadLetterByHand stores in the DLQ what the projector would have stored
// for the event (subject, body) at seq of PERSONS with Nats-Msg-Id msgID,
// had an older decoder refused it.
func (e *env) deadLetterByHand(t *testing.T, subject string, body []byte, seq uint64, msgID string) uint64 {
	t.Helper()
	m := nats.NewMsg(projector.DLQSubjectPrefix + subject)
	m.Data = body
	m.Header.Set("Ce-Source", "urn:test")
	m.Header.Set(projector.HeaderDLQReason, "invalid event: data.first_name: rejected by an older decoder")
	m.Header.Set(projector.HeaderOriginalSubject, subject)
	m.Header.Set(projector.HeaderOriginalStream, "PERSONS")
	m.Header.Set(projector.HeaderOriginalSequence, strconv.FormatUint(seq, 10))
	m.Header.Set(projector.HeaderOriginalMsgID, msgID)
	ack, err := e.js.PublishMsg(t.Context(), m)
	if err != nil {
		t.Fatalf("dead-letter by hand: %v", err)
	}
	return ack.Sequence
}

// list returns the listing of the DLQ.
func list(t *testing.T, tool *Tool) []Letter {
	t.Helper()
	var got []Letter
	if err := tool.List(t.Context(), func(l Letter) error { got = append(got, l); return nil }); err != nil {
		t.Fatalf("List: %v", err)
	}
	return got
}

// lastMsg returns the last message of PERSONS.
func (e *env) lastMsg(t *testing.T) *jetstream.RawStreamMsg {
	t.Helper()
	info, err := e.source.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.source.GetMsg(t.Context(), info.State.LastSeq)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
