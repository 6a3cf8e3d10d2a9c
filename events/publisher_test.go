package events

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
)

// runJetStream starts an in-process nats-server with JetStream on a random
// port and a temporary store, with the stream PERSONS on persons.>, and
// returns a JetStream context on it. Everything is shut down when the test
// ends.
func runJetStream(t *testing.T) (jetstream.JetStream, jetstream.Stream) {
	t.Helper()
	_, js := testkit.StartNATS(t)
	return js, testkit.PersonsStream(t, js)
}

// publisherOnStream returns a Publisher on a fresh PERSONS stream (also
// returned), with a context that ends after 30 s or with the test.
func publisherOnStream(t *testing.T) (context.Context, *Publisher, jetstream.Stream) {
	t.Helper()
	js, st := runJetStream(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx, NewPublisher(js), st
}

func streamMsgs(t *testing.T, st jetstream.Stream) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	return info.State.Msgs
}

// testEvent returns the event of data at version from urn:example:test,
// failing the test when NewEvent refuses it.
func testEvent(t *testing.T, version uint64, data any) Event {
	t.Helper()
	ev, err := NewEvent("urn:example:test", version, data)
	if err != nil {
		t.Fatalf("NewEvent: %v", err)
	}
	return ev
}

// mustPublish publishes ev with p and returns its sequence, failing the
// test (naming the publish what) when it fails.
func mustPublish(ctx context.Context, t *testing.T, p *Publisher, ev Event, what string) uint64 {
	t.Helper()
	seq, err := p.Publish(ctx, ev)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return seq
}

func TestPublisherPublishesEveryType(t *testing.T) {
	ctx, p, st := publisherOnStream(t)

	for i, typ := range Types {
		t.Run(string(typ), func(t *testing.T) {
			sample, err := Decode(sampleSubject(typ), mustJSON(t, sampleEnvelope(typ)))
			if err != nil {
				t.Fatalf("Decode sample: %v", err)
			}
			ev := testEvent(t, uint64(i+1), sample.Data)
			seq := mustPublish(ctx, t, p, ev, "Publish")
			if want := uint64(i + 1); seq != want {
				t.Errorf("Publish sequence = %d, want %d", seq, want)
			}
			msg, err := st.GetMsg(ctx, seq)
			if err != nil {
				t.Fatalf("GetMsg(%d): %v", seq, err)
			}
			if msg.Sequence != seq {
				t.Errorf("stored sequence = %d, want %d", msg.Sequence, seq)
			}
			if want := sampleSubject(typ); msg.Subject != want {
				t.Errorf("subject = %q, want %q", msg.Subject, want)
			}
			if got := msg.Header.Get(jetstream.MsgIDHeader); got != ev.ID {
				t.Errorf("Nats-Msg-Id = %q, want %q", got, ev.ID)
			}
			got, err := Decode(msg.Subject, msg.Data)
			if err != nil {
				t.Fatalf("stored message does not decode: %v", err)
			}
			if got.ID != ev.ID || got.EntityVersion != ev.EntityVersion || got.Type != typ {
				t.Errorf("stored event = %+v, want id %s version %d type %s", got, ev.ID, ev.EntityVersion, typ)
			}
		})
	}
}

func TestPublisherDuplicateReturnsOriginalSequence(t *testing.T) {
	ctx, p, st := publisherOnStream(t)

	first := testEvent(t, 1, ConsumerDeleted{ConsumerID: testConsumerID})
	seq1 := mustPublish(ctx, t, p, first, "first Publish")
	other := testEvent(t, 2, ConsumerDeleted{ConsumerID: otherID})
	seqOther := mustPublish(ctx, t, p, other, "other Publish")
	seq2 := mustPublish(ctx, t, p, first, "second Publish of the same event")
	if seq2 != seq1 {
		t.Errorf("duplicate Publish sequence = %d, want the original %d", seq2, seq1)
	}
	if seqOther == seq1 {
		t.Errorf("distinct events got the same sequence %d", seq1)
	}
	if n := streamMsgs(t, st); n != 2 {
		t.Errorf("stream holds %d messages, want 2", n)
	}
}

func TestPublisherRefusesInvalidEvents(t *testing.T) {
	ctx, p, st := publisherOnStream(t)

	valid := Signer{SignerID: testSignerID, ConsumerID: testConsumerID, FirstName: "A", LastName: "B",
		AccountAccess: AccountAccessPHI, Status: SignerStatusActive, Type: SignerTypeParent}
	tests := []struct {
		name      string
		edit      func(e *Event)
		wantField string // "" when ErrUnknownData is wanted instead
	}{
		{"version 0", func(e *Event) { e.EntityVersion = 0 }, "entityversion"},
		{"empty id", func(e *Event) { e.ID = "" }, "id"},
		{"empty source", func(e *Event) { e.Source = "" }, "source"},
		{"bad signer id", func(e *Event) { s := valid; s.SignerID = "s-1"; e.Data = s }, "data.signer_id"},
		{"bad enum", func(e *Event) { s := valid; s.Status = "GONE"; e.Data = s }, "data.status"},
		{"bad ssn", func(e *Event) { s := valid; s.SSN = "12345"; e.Data = s }, "data.social_security_number"},
		{"bad date of birth", func(e *Event) { s := valid; s.DateOfBirth = "2023-02-29"; e.Data = s }, "data.date_of_birth"},
		{"address without city", func(e *Event) {
			s := valid
			s.Address = &Address{Line1: "x", State: "s", ZipCode: "z", Country: "c"}
			e.Data = s
		}, "data.address.city"},
		{"pointer data", func(e *Event) { s := valid; e.Data = &s }, ""},
		{"type mismatch", func(e *Event) { e.Type = TypeConsumerUpserted }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := testEvent(t, 1, valid)
			tt.edit(&ev)
			seq, err := p.Publish(ctx, ev)
			if err == nil {
				t.Fatalf("Publish = %d, nil; want an error", seq)
			}
			if tt.wantField == "" {
				if !errors.Is(err, ErrUnknownData) {
					t.Errorf("Publish error = %v, want ErrUnknownData", err)
				}
			} else {
				var ie *InvalidEventError
				if !errors.As(err, &ie) || ie.Field != tt.wantField {
					t.Errorf("Publish error = %v, want an InvalidEventError for %q", err, tt.wantField)
				}
			}
			if n := streamMsgs(t, st); n != 0 {
				t.Errorf("stream holds %d messages, want 0", n)
			}
		})
	}
}

func TestPublisherLowerCasesSubject(t *testing.T) {
	ctx, p, st := publisherOnStream(t)

	ev := testEvent(t, 1, SignerDeleted{SignerID: strings.ToUpper(testSignerID), ConsumerID: strings.ToUpper(testConsumerID)})
	seq := mustPublish(ctx, t, p, ev, "Publish")
	msg, err := st.GetMsg(ctx, seq)
	if err != nil {
		t.Fatalf("GetMsg: %v", err)
	}
	if want := sampleSubject(TypeSignerDeleted); msg.Subject != want {
		t.Errorf("subject = %q, want %q", msg.Subject, want)
	}
}

func TestPublisherWithoutStream(t *testing.T) {
	js, _ := runJetStream(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := js.DeleteStream(ctx, "PERSONS"); err != nil {
		t.Fatalf("delete stream: %v", err)
	}
	ev := testEvent(t, 1, ConsumerDeleted{ConsumerID: testConsumerID})
	seq, err := NewPublisher(js).Publish(ctx, ev)
	if !errors.Is(err, jetstream.ErrNoStreamResponse) {
		t.Fatalf("Publish without a stream = %d, %v; want jetstream.ErrNoStreamResponse", seq, err)
	}
}

// TestNewMsg: the message of an event is what Publish sends (lower-cased
// subject, Nats-Msg-Id, a body that decodes); an invalid event has none.
func TestNewMsg(t *testing.T) {
	ev := testEvent(t, 1, SignerDeleted{SignerID: strings.ToUpper(testSignerID), ConsumerID: strings.ToUpper(testConsumerID)})
	msg, err := NewMsg(ev)
	if err != nil {
		t.Fatalf("NewMsg: %v", err)
	}
	if want := sampleSubject(TypeSignerDeleted); msg.Subject != want {
		t.Errorf("subject = %q, want %q", msg.Subject, want)
	}
	if got := msg.Header.Get(jetstream.MsgIDHeader); got != ev.ID {
		t.Errorf("Nats-Msg-Id = %q, want %q", got, ev.ID)
	}
	if _, err := Decode(msg.Subject, msg.Data); err != nil {
		t.Errorf("body does not decode: %v", err)
	}
	ev.Data = SignerDeleted{SignerID: "not-a-uuid", ConsumerID: testConsumerID}
	if msg, err := NewMsg(ev); !errors.Is(err, ErrInvalidEvent) {
		t.Errorf("NewMsg of an invalid event = %v, %v; want ErrInvalidEvent", msg, err)
	}
}
