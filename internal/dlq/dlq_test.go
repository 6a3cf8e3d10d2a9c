package dlq

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/projector"
)

// TestListWhatTheProjectorDeadLetters runs the real projector over an
// invalid event and checks what List shows of it: where it came from and
// why, never its body.
func TestListWhatTheProjectorDeadLetters(t *testing.T) {
	e := newEnv(t)
	_, goodSubject, goodBody := validEvent(t)
	e.publishRaw(t, goodSubject, goodBody, nil)
	badSubject := "persons.consumer." + uuid.NewString()
	badBody := []byte(`{"specversion":"1.0","ssn":"123-45-6789"}`)
	badSeq := e.publishRaw(t, badSubject, badBody, nats.Header{"Nats-Msg-Id": {"bad-event-1"}, "Ce-Source": {"urn:upstream"}})
	e.project(t)

	got := list(t, New(e.js, Config{}))
	if len(got) != 1 {
		t.Fatalf("List = %+v, want the one invalid event", got)
	}
	l := got[0]
	if l.Subject != badSubject || l.Stream != "PERSONS" || l.OrigSeq != badSeq || l.MsgID != "bad-event-1" {
		t.Errorf("letter = %+v, want subject %s, stream PERSONS, original seq %d, msg id bad-event-1", l, badSubject, badSeq)
	}
	if l.Reason == "" || l.Seq == 0 || l.Time.IsZero() {
		t.Errorf("letter = %+v, want a reason, a sequence and a time", l)
	}
	if l.Size != len(badBody) {
		t.Errorf("size = %d, want %d (the body's length, from the headers-only listing)", l.Size, len(badBody))
	}
	if strings.Contains(l.Reason, "123-45-6789") {
		t.Errorf("reason %q quotes the body", l.Reason)
	}

	t.Run("still invalid stays", func(t *testing.T) {
		out, err := New(e.js, Config{}).Replay(t.Context(), l.Seq, ReplayOptions{})
		if err != nil || out.Result != StillInvalid || out.Problem == "" {
			t.Fatalf("Replay = %+v, %v; want StillInvalid with the problem", out, err)
		}
		if n := len(list(t, New(e.js, Config{}))); n != 1 {
			t.Errorf("DLQ holds %d letters after a refused replay, want 1", n)
		}
	})
	t.Run("forced", func(t *testing.T) {
		out, err := New(e.js, Config{}).Replay(t.Context(), l.Seq, ReplayOptions{Force: true})
		if err != nil || out.Result != Replayed {
			t.Fatalf("Replay = %+v, %v; want Replayed", out, err)
		}
		m := e.lastMsg(t)
		if m.Sequence != out.NewSeq || m.Subject != badSubject || !bytes.Equal(m.Data, badBody) {
			t.Errorf("PERSONS last = seq %d %s %q; want seq %d %s with the original body", m.Sequence, m.Subject, m.Data, out.NewSeq, badSubject)
		}
		if m.Header.Get("Ce-Source") != "urn:upstream" || m.Header.Get(HeaderReplayOf) != "PERSONS:"+uintStr(badSeq) {
			t.Errorf("headers = %v; want the original Ce-Source and %s PERSONS:%d", m.Header, HeaderReplayOf, badSeq)
		}
		for k := range m.Header {
			if strings.HasPrefix(k, "Lookup-Original") || k == projector.HeaderDLQReason {
				t.Errorf("republished event carries the dead-letter header %s", k)
			}
		}
		if n := len(list(t, New(e.js, Config{}))); n != 0 {
			t.Errorf("DLQ holds %d letters after the replay, want 0", n)
		}
	})
}

// TestReplayInsideTheDuplicateWindow replays an event whose original
// Nats-Msg-Id the source stream still remembers: the replay must land, and
// a second replay of the same event must not land twice.
func TestReplayInsideTheDuplicateWindow(t *testing.T) {
	e := newEnv(t)
	ev, subject, body := validEvent(t)
	seq := e.publishRaw(t, subject, body, nats.Header{jetstream.MsgIDHeader: {ev.ID}})
	tool := New(e.js, Config{})

	first := e.deadLetterByHand(t, subject, body, seq, ev.ID)
	out, err := tool.Replay(t.Context(), first, ReplayOptions{})
	if err != nil || out.Result != Replayed || out.NewSeq <= seq {
		t.Fatalf("Replay = %+v, %v; want Replayed at a sequence after %d", out, err, seq)
	}
	if m := e.lastMsg(t); m.Sequence != out.NewSeq || !bytes.Equal(m.Data, body) {
		t.Fatalf("PERSONS last = %d, want the replay at %d with the original body", m.Sequence, out.NewSeq)
	}

	// The same dead letter again, as after a crash between the republish
	// and the deletion: acknowledged as a duplicate, removed, not republished.
	again := e.deadLetterByHand(t, subject, body, seq, ev.ID)
	out2, err := tool.Replay(t.Context(), again, ReplayOptions{})
	if err != nil || out2.Result != AlreadyReplayed || out2.NewSeq != out.NewSeq {
		t.Fatalf("second Replay = %+v, %v; want AlreadyReplayed at %d", out2, err, out.NewSeq)
	}
	if m := e.lastMsg(t); m.Sequence != out.NewSeq {
		t.Errorf("PERSONS last = %d after the second replay, want still %d", m.Sequence, out.NewSeq)
	}
	if n := len(list(t, tool)); n != 0 {
		t.Errorf("DLQ holds %d letters, want 0", n)
	}
}

func TestReplayErrors(t *testing.T) {
	e := newEnv(t)
	tool := New(e.js, Config{})
	_, subject, body := validEvent(t)

	t.Run("no such sequence", func(t *testing.T) {
		if _, err := tool.Replay(t.Context(), 999, ReplayOptions{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Replay(999) = %v, want ErrNotFound", err)
		}
	})
	t.Run("a failed republish leaves the letter", func(t *testing.T) {
		m := nats.NewMsg(projector.DLQSubjectPrefix + subject)
		m.Data = body
		m.Header.Set(projector.HeaderOriginalSubject, subject)
		m.Header.Set(projector.HeaderOriginalStream, "GONE") // not the stream that holds the subject
		m.Header.Set(projector.HeaderOriginalSequence, "7")
		ack, err := e.js.PublishMsg(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tool.Replay(t.Context(), ack.Sequence, ReplayOptions{}); err == nil {
			t.Fatalf("Replay into the wrong stream succeeded")
		}
		if _, err := e.dlq.GetMsg(t.Context(), ack.Sequence); err != nil {
			t.Errorf("the letter is gone after a failed republish: %v", err)
		}
		_ = e.dlq.DeleteMsg(t.Context(), ack.Sequence)
	})
	t.Run("subject outside the contract", func(t *testing.T) {
		m := nats.NewMsg(projector.DLQSubjectPrefix + subject)
		m.Data = body
		m.Header.Set(projector.HeaderOriginalSubject, "admin.things")
		ack, err := e.js.PublishMsg(t.Context(), m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tool.Replay(t.Context(), ack.Sequence, ReplayOptions{Force: true}); err == nil || !strings.Contains(err.Error(), "admin.things") {
			t.Errorf("Replay = %v, want an error naming the subject", err)
		}
		_ = e.dlq.DeleteMsg(t.Context(), ack.Sequence)
	})
	t.Run("missing DLQ stream", func(t *testing.T) {
		err := New(e.js, Config{Stream: "NOPE"}).List(t.Context(), func(Letter) error { return nil })
		if !errors.Is(err, jetstream.ErrStreamNotFound) || !strings.Contains(err.Error(), "NOPE") {
			t.Errorf("List = %v, want stream not found naming NOPE", err)
		}
	})
}

func TestReplayAll(t *testing.T) {
	e := newEnv(t)
	tool := New(e.js, Config{})
	var want []uint64
	for range 3 {
		ev, subject, body := validEvent(t)
		seq := e.publishRaw(t, subject, body, nats.Header{jetstream.MsgIDHeader: {ev.ID}})
		want = append(want, e.deadLetterByHand(t, subject, body, seq, ev.ID))
	}
	bad := "persons.consumer." + uuid.NewString()
	badSeq := e.publishRaw(t, bad, []byte(`{}`), nil)
	invalid := e.deadLetterByHand(t, bad, []byte(`{}`), badSeq, "")

	var got []Outcome
	if err := tool.ReplayAll(t.Context(), ReplayOptions{}, func(o Outcome) { got = append(got, o) }); err != nil {
		t.Fatalf("ReplayAll: %v", err)
	}
	if len(got) != 4 {
		t.Fatalf("ReplayAll gave %d outcomes, want 4: %+v", len(got), got)
	}
	for i, seq := range want {
		if got[i].Seq != seq || got[i].Result != Replayed {
			t.Errorf("outcome %d = seq %d %v, want seq %d replayed (oldest first)", i, got[i].Seq, got[i].Result, seq)
		}
	}
	if got[3].Seq != invalid || got[3].Result != StillInvalid {
		t.Errorf("last outcome = seq %d %v, want seq %d still-invalid", got[3].Seq, got[3].Result, invalid)
	}
	if left := list(t, tool); len(left) != 1 || left[0].Seq != invalid {
		t.Errorf("DLQ after ReplayAll = %+v, want only the invalid letter %d", left, invalid)
	}
}

// TestListPages lists more letters than one fetch takes, with one deleted
// in the middle.
func TestListPages(t *testing.T) {
	e := newEnv(t)
	_, subject, body := validEvent(t)
	var want []uint64
	for i := range 600 {
		seq := e.deadLetterByHand(t, subject, body, uint64(i+1), "")
		if i == 300 {
			if err := e.dlq.DeleteMsg(t.Context(), seq); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want = append(want, seq)
	}
	got := list(t, New(e.js, Config{}))
	if len(got) != len(want) {
		t.Fatalf("List gave %d letters, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Seq != want[i] {
			t.Fatalf("letter %d has seq %d, want %d (oldest first, the deleted one skipped)", i, got[i].Seq, want[i])
		}
	}
}

func uintStr(n uint64) string { return strconv.FormatUint(n, 10) }
