package projector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

func TestProjectorEndToEnd(t *testing.T) {
	js := setup(t)
	c1, c2, k1 := newID(), newID(), newID()
	s1, s2 := "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	upper := strings.ToUpper(c2)

	badSSN := events.Event{ID: newID(), Source: "t", EntityVersion: 9, Data: fullSigner(c1, s2, "Bad")}
	badSSNMsg := encodeMsg(t, badSSN)
	badSSNMsg.body = []byte(strings.Replace(string(badSSNMsg.body), `"123456789"`, `"12345678X"`, 1))
	badDOBMsg := encodeMsg(t, badSSN)
	badDOBMsg.body = []byte(strings.Replace(string(badDOBMsg.body), `"1970-01-31"`, `"1970-02-31"`, 1))
	badDOBMsg.msgID = newID()
	if string(badSSNMsg.body) == string(encodeMsg(t, badSSN).body) {
		t.Fatal("test set-up: SSN not replaced")
	}

	dup := encodeMsg(t, consumerEv(c1, 1, "Ann"))
	msgs := []wireMsg{
		dup,
		dup, // duplicate publish: dropped by JetStream (same Nats-Msg-Id)
		encodeMsg(t, contactEv(k1, 1, "Kim")),
		encodeMsg(t, signerEv(c1, s1, 2, "A")),
		encodeMsg(t, signerEv(c1, s2, 1, "B")),
		encodeMsg(t, signerEv(c1, s1, 1, "Old")), // out of order: skipped
		{subject: events.SubjectPrefixConsumer + c1, body: []byte("{not json"), msgID: newID()},
		badSSNMsg,
		badDOBMsg,
		encodeMsg(t, signerDelEv(c1, s2, 2)),
		encodeMsg(t, consumerEv(c2, 1, "Bob")),
		encodeMsg(t, consumerDelEv(c2, 5)),
		encodeMsg(t, consumerEv(c2, 4, "Late")), // late upsert after delete: skipped
		encodeMsg(t, contactDelEv(k1, 2)),
		encodeMsg(t, contactEv(k1, 2, "Late")), // skipped
		{subject: events.SubjectPrefixConsumer + upper, msgID: newID(), body: []byte(`{"specversion":"1.0","id":"i","source":"s","type":"persons.consumer.upserted.v1","entityversion":1,"data":{"consumer_id":"` + c1 + `","business_id":"` + testBiz + `","first_name":"f","last_name":"l"}}`)}, // subject disagrees
	}
	// A re-delivery of an applied event under a new message id: version skip.
	redeliver := msgs[2]
	redeliver.msgID = newID()
	msgs = append(msgs, redeliver)
	publishAll(t, js, msgs)
	last := streamLastSeq(t, js)
	if last != uint64(len(msgs)-1) {
		t.Fatalf("stream holds %d messages, want %d (one duplicate dropped)", last, len(msgs)-1)
	}

	s := openStore(t, t.TempDir(), StoreOptions{})
	p := New(js, s, Config{BatchSize: 4})
	runProjector(t, p)
	select {
	case <-p.CaughtUp():
	case <-time.After(20 * time.Second):
		t.Fatalf("not caught up: %+v", p.Progress())
	}
	pr := p.Progress()
	if pr.AppliedSeq != last || pr.TargetSeq != last || !pr.CaughtUp || !pr.Connected {
		t.Errorf("progress = %+v, want applied=target=%d, caught up, connected", pr, last)
	}
	if pr.Applied != 8 || pr.Skipped != 4 || pr.DeadLettered != 4 {
		t.Errorf("counts applied/skipped/dead = %d/%d/%d, want 8/4/4", pr.Applied, pr.Skipped, pr.DeadLettered)
	}
	if pr.LastEventTime.IsZero() || time.Since(pr.LastEventTime) > time.Minute {
		t.Errorf("LastEventTime = %v", pr.LastEventTime)
	}

	ctx := t.Context()
	if got := firstName(t, s, c1); got != "Ann" {
		t.Errorf("consumer c1 = %q, want Ann", got)
	}
	if got := signerNames(t, s, c1); got != "A" {
		t.Errorf("signers of c1 = %q, want A", got)
	}
	for _, id := range []string{c2, k1} {
		if _, err := s.Person(ctx, id); !errors.Is(err, events.ErrNotFound) {
			t.Errorf("Person(%s) err = %v, want ErrNotFound", id, err)
		}
	}

	// The DLQ holds the four invalid events with their reasons.
	dlq, err := js.Stream(ctx, "PERSONS_DLQ")
	if err != nil {
		t.Fatalf("DLQ stream: %v", err)
	}
	if got := dlq.CachedInfo().State.Msgs; got != 4 {
		t.Fatalf("DLQ holds %d messages, want 4", got)
	}
	wantFields := []string{"invalid event: ", "data.social_security_number", "data.date_of_birth", "subject"}
	for i := range uint64(4) {
		m, err := dlq.GetMsg(ctx, i+1)
		if err != nil {
			t.Fatal(err)
		}
		origSeq, _ := strconv.ParseUint(m.Header.Get(HeaderOriginalSequence), 10, 64)
		orig, err := mustStream(t, js).GetMsg(ctx, origSeq)
		if err != nil {
			t.Fatalf("original of DLQ message %d (seq %q): %v", i+1, m.Header.Get(HeaderOriginalSequence), err)
		}
		reason := m.Header.Get(HeaderDLQReason)
		if !strings.Contains(reason, wantFields[i]) {
			t.Errorf("DLQ message %d: reason %q does not name %q", i+1, reason, wantFields[i])
		}
		if strings.Contains(reason, "12345678X") || strings.Contains(reason, "1970-02-31") {
			t.Errorf("DLQ message %d: reason %q contains personal data", i+1, reason)
		}
		if m.Subject != DLQSubjectPrefix+orig.Subject || m.Header.Get(HeaderOriginalSubject) != orig.Subject {
			t.Errorf("DLQ message %d: subject %q, original-subject header %q; original subject %q", i+1, m.Subject, m.Header.Get(HeaderOriginalSubject), orig.Subject)
		}
		if string(m.Data) != string(orig.Data) {
			t.Errorf("DLQ message %d: body differs from the original", i+1)
		}
		if got, want := m.Header.Get(jetstream.MsgIDHeader), "PERSONS:"+strconv.FormatUint(origSeq, 10); got != want {
			t.Errorf("DLQ message %d: Nats-Msg-Id %q, want %q", i+1, got, want)
		}
		if m.Header.Get(HeaderOriginalStream) != "PERSONS" {
			t.Errorf("DLQ message %d: original stream header %q", i+1, m.Header.Get(HeaderOriginalStream))
		}
	}

	// Live tail: events published while running are applied.
	publishAll(t, js, []wireMsg{encodeMsg(t, signerEv(c1, s2, 3, "B3"))})
	waitApplied(t, p, last+1, 10*time.Second)
	if got := signerNames(t, s, c1); got != "A,B3" {
		t.Errorf("after live event: signers of c1 = %q, want A,B3", got)
	}
}

func mustStream(t *testing.T, js jetstream.JetStream) jetstream.Stream {
	t.Helper()
	s, err := js.Stream(t.Context(), "PERSONS")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEmptyStreamIsCaughtUpAtOnce(t *testing.T) {
	js := setup(t)
	p := New(js, openStore(t, t.TempDir(), StoreOptions{}), Config{})
	runProjector(t, p)
	select {
	case <-p.CaughtUp():
	case <-time.After(10 * time.Second):
		t.Fatalf("not caught up on an empty stream: %+v", p.Progress())
	}
}

func TestMissingStream(t *testing.T) {
	srv := startServer(t, t.TempDir(), -1)
	js := connect(t, srv.ClientURL())
	p := New(js, openStore(t, t.TempDir(), StoreOptions{}), Config{Stream: "NOPE"})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	err := p.Run(ctx)
	if !errors.Is(err, ErrStreamNotFound) {
		t.Fatalf("Run err = %v, want ErrStreamNotFound", err)
	}
	if !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("error %q does not name the stream", err)
	}
}

// TestRestartMidStream stops the projector and closes the store part-way,
// reopens both and compares the result with a from-scratch projection.
func TestRestartMidStream(t *testing.T) {
	js := setup(t)
	msgs := genStream(t, rand.New(rand.NewPCG(1, 2)), 5000)
	publishAll(t, js, msgs)
	last := streamLastSeq(t, js)

	dir := t.TempDir()
	for round, stopAt := range []uint64{last / 3, 2 * last / 3, last} {
		s, err := Open(dir, StoreOptions{})
		if err != nil {
			t.Fatal(err)
		}
		reached := make(chan struct{})
		var closed bool
		p := newProjector(js, s, Config{BatchSize: 100}, withAfterCommit(func(seq uint64) {
			if seq >= stopAt && !closed {
				closed = true
				close(reached)
			}
		}))
		stop := runProjector(t, p)
		select {
		case <-reached:
		case <-time.After(30 * time.Second):
			t.Fatalf("round %d: checkpoint %d did not reach %d", round, p.Progress().AppliedSeq, stopAt)
		}
		if err := stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, dir, StoreOptions{})
	if cp, _ := s.Checkpoint(); cp != last {
		t.Fatalf("checkpoint %d, want %d", cp, last)
	}

	fresh := openStore(t, t.TempDir(), StoreOptions{})
	pf := New(js, fresh, Config{})
	runProjector(t, pf)
	waitApplied(t, pf, last, 30*time.Second)
	want, _, _, _ := reference(msgs)
	compareState(t, dump(t, s), dump(t, fresh))
	compareState(t, dump(t, s), want)
}

// TestBrokerRestart shuts the server down mid-stream and starts a new one
// on the same port and store directory.
func TestBrokerRestart(t *testing.T) {
	natsDir := t.TempDir()
	srv := startServer(t, natsDir, -1)
	port := srv.Addr().(interface{ String() string }).String()
	js := connect(t, srv.ClientURL())
	createStream(t, js)
	msgs := genStream(t, rand.New(rand.NewPCG(3, 4)), 4000)
	publishAll(t, js, msgs[:2000])

	s := openStore(t, t.TempDir(), StoreOptions{})
	p := New(js, s, Config{BatchSize: 50, RefreshInterval: 100 * time.Millisecond})
	runProjector(t, p)

	// Readers run throughout, concurrently with the writes (MVCC snapshots).
	readCtx, stopReads := context.WithCancel(t.Context())
	readErr := make(chan error, 1)
	go func() {
		var ids []string
		for _, m := range msgs {
			if m.valid {
				ids = append(ids, m.ev.Entity().ConsumerID)
			}
		}
		for i := 0; readCtx.Err() == nil; i++ {
			id := ids[i%len(ids)]
			if id == "" {
				continue
			}
			if _, err := s.Person(readCtx, id); err != nil && !errors.Is(err, events.ErrNotFound) && readCtx.Err() == nil {
				readErr <- err
				return
			}
			if _, _, err := s.Signers(readCtx, id); err != nil && !errors.Is(err, events.ErrNotFound) && readCtx.Err() == nil {
				readErr <- err
				return
			}
		}
		readErr <- nil
	}()
	defer func() {
		stopReads()
		if err := <-readErr; err != nil {
			t.Errorf("concurrent read: %v", err)
		}
	}()
	waitApplied(t, p, 500, 30*time.Second)

	srv.Shutdown()
	srv.WaitForShutdown()
	testkit.WaitFor(t, 10*time.Second, func() error {
		if p.Progress().Connected {
			return errors.New("projector still reports connected")
		}
		return nil
	})
	_, portStr, _ := strings.Cut(port, "127.0.0.1:")
	pn, err := strconv.Atoi(portStr)
	if err != nil {
		t.Fatalf("port %q: %v", port, err)
	}
	startServer(t, natsDir, pn)
	testkit.WaitFor(t, 20*time.Second, func() error {
		if !p.Progress().Connected {
			return errors.New("projector not reconnected")
		}
		return nil
	})
	publishAll(t, js, msgs[2000:])
	last := streamLastSeq(t, js)
	waitApplied(t, p, last, 60*time.Second)
	want, applied, skipped, dead := reference(msgs)
	compareState(t, dump(t, s), want)
	pr := p.Progress()
	if got := pr.Applied + pr.Skipped + pr.DeadLettered; got != last {
		t.Errorf("applied+skipped+dead-lettered = %d, want %d (each message once)", got, last)
	}
	if pr.Applied != uint64(applied) || pr.Skipped != uint64(skipped) || pr.DeadLettered != uint64(dead) {
		t.Errorf("counts %d/%d/%d, reference %d/%d/%d", pr.Applied, pr.Skipped, pr.DeadLettered, applied, skipped, dead)
	}
}

// TestStreamGaps deletes messages from the stream: sequences with gaps are
// consumed without waiting for the missing ones.
func TestStreamGaps(t *testing.T) {
	js := setup(t)
	c := newID()
	var msgs []wireMsg
	for v := range uint64(10) {
		msgs = append(msgs, encodeMsg(t, consumerEv(c, v+1, fmt.Sprintf("V%d", v+1))))
	}
	publishAll(t, js, msgs)
	st := mustStream(t, js)
	for _, seq := range []uint64{3, 4, 10} {
		if err := st.DeleteMsg(t.Context(), seq); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, t.TempDir(), StoreOptions{})
	p := New(js, s, Config{})
	runProjector(t, p)
	select {
	case <-p.CaughtUp():
	case <-time.After(10 * time.Second):
		t.Fatalf("not caught up: %+v", p.Progress())
	}
	if got := firstName(t, s, c); got != "V9" {
		t.Errorf("consumer = %q, want V9", got)
	}
	if pr := p.Progress(); pr.Applied != 7 {
		t.Errorf("applied %d, want 7", pr.Applied)
	}
}

func TestStreamDeletedWhileRunning(t *testing.T) {
	js := setup(t)
	publishAll(t, js, []wireMsg{encodeMsg(t, consumerEv(newID(), 1, "Ann"))})
	p := New(js, openStore(t, t.TempDir(), StoreOptions{}), Config{RefreshInterval: 50 * time.Millisecond})
	errc := make(chan error, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { errc <- p.Run(ctx) }()
	waitApplied(t, p, 1, 10*time.Second)
	if err := js.DeleteStream(ctx, "PERSONS"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrStreamNotFound) || !strings.Contains(err.Error(), "PERSONS") {
			t.Fatalf("Run err = %v, want ErrStreamNotFound naming PERSONS", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return after the stream was deleted")
	}
}

// TestConsumerFailureResumesFromCheckpoint fails the consumer mid-stream
// (twice): the projector recreates it from the checkpoint, skipping and
// repeating nothing.
func TestConsumerFailureResumesFromCheckpoint(t *testing.T) {
	js := setup(t)
	msgs := genStream(t, rand.New(rand.NewPCG(8, 9)), 3000)
	publishAll(t, js, msgs)
	last := streamLastSeq(t, js)

	s := openStore(t, t.TempDir(), StoreOptions{})
	logger, logs := testkit.TextLogger()
	var mu sync.Mutex
	failAt := map[uint64]bool{1000: true, 2500: true}
	p := newProjector(js, s, Config{BatchSize: 100, Logger: logger}, withReadFault(func(seq uint64) error {
		mu.Lock()
		defer mu.Unlock()
		if failAt[seq] {
			delete(failAt, seq)
			return errors.New("injected consumer failure")
		}
		return nil
	}))
	runProjector(t, p)
	waitApplied(t, p, last, 30*time.Second)

	want, applied, skipped, dead := reference(msgs)
	compareState(t, dump(t, s), want)
	pr := p.Progress()
	if pr.Applied != uint64(applied) || pr.Skipped != uint64(skipped) || pr.DeadLettered != uint64(dead) {
		t.Errorf("counts %d/%d/%d, reference %d/%d/%d (an event applied twice shows as an extra skip)",
			pr.Applied, pr.Skipped, pr.DeadLettered, applied, skipped, dead)
	}
	out := logs.String()
	if n := strings.Count(out, "msg=consuming"); n != 3 {
		t.Errorf("%d consumer sessions, want 3 (two failures)", n)
	}
	for _, from := range []string{"from_seq=1000", "from_seq=2500"} {
		if !strings.Contains(out, from) {
			t.Errorf("no session resumed %s", from)
		}
	}
}

// TestBinaryAndStructuredModes: a stream of both content modes, mixed (every
// other valid event in binary mode, as the CloudEvents SDKs publish by
// default), is applied exactly as the same events all in structured mode;
// a binary-mode event with a bad header is dead-lettered with a reason that
// names the header, and its headers kept.
func TestBinaryAndStructuredModes(t *testing.T) {
	js := setup(t)
	rng := rand.New(rand.NewPCG(45, 43))
	msgs := genStream(t, rng, 600)
	binary := 0
	for i, m := range msgs {
		if m.valid && i%2 == 0 {
			msgs[i] = binaryMsg(t, m)
			binary++
		}
	}
	bad := binaryMsg(t, encodeMsg(t, consumerEv(newID(), 3, "Hdr")))
	bad.header.Set("ce-entityversion", "three")
	bad.valid = false
	msgs = append(msgs, bad)
	publishAll(t, js, msgs)
	want, _, _, dead := reference(msgs)

	s := openStore(t, t.TempDir(), StoreOptions{})
	p := New(js, s, Config{BatchSize: 50})
	runProjector(t, p)
	waitApplied(t, p, streamLastSeq(t, js), 30*time.Second)
	compareState(t, dump(t, s), want)
	if pr := p.Progress(); pr.DeadLettered != uint64(dead) || binary < 100 {
		t.Errorf("dead-lettered %d, want %d (%d events in binary mode)", pr.DeadLettered, dead, binary)
	}
	dlq, err := js.Stream(t.Context(), "PERSONS_DLQ")
	if err != nil {
		t.Fatal(err)
	}
	last, err := dlq.GetLastMsgForSubject(t.Context(), "dlq."+bad.subject)
	if err != nil {
		t.Fatal(err)
	}
	if r := last.Header.Get(HeaderDLQReason); !strings.Contains(r, "ce-entityversion") {
		t.Errorf("dead letter's reason %q does not name the header", r)
	}
	if last.Header.Get("ce-entityversion") != "three" || string(last.Data) != string(bad.body) {
		t.Errorf("dead letter lost the event's headers or body: %v", last.Header)
	}
}
