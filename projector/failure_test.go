package projector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/wait"
)

// TestStoreFailureRetried fails the first write transactions: the projector
// retries with backoff, skips nothing and applies nothing twice.
func TestStoreFailureRetried(t *testing.T) {
	js := setup(t)
	c := newID()
	var msgs []wireMsg
	for v := range uint64(20) {
		msgs = append(msgs, encodeMsg(t, consumerEv(c, v+1, fmt.Sprintf("V%d", v+1))))
	}
	publishAll(t, js, msgs)

	s := openStore(t, t.TempDir(), StoreOptions{})
	var calls atomic.Int32
	s.applyFault = func() error {
		if calls.Add(1) <= 3 {
			return errors.New("injected disk failure")
		}
		return nil
	}
	logger, logs := logtest.Text()
	p := New(js, s, Config{BatchSize: 5, Logger: logger})
	runProjector(t, p)
	waitApplied(t, p, 20, 20*time.Second)
	if got := calls.Load(); got < 4 {
		t.Errorf("%d write attempts, want at least 4 (3 failures, then success)", got)
	}
	pr := p.Progress()
	if pr.Applied != 20 || pr.Skipped != 0 {
		t.Errorf("applied/skipped = %d/%d, want 20/0", pr.Applied, pr.Skipped)
	}
	if got := firstName(t, s, c); got != "V20" {
		t.Errorf("consumer = %q, want V20", got)
	}
	if n := strings.Count(logs.String(), "injected disk failure"); n != 3 {
		t.Errorf("%d store failures logged, want 3", n)
	}
}

// TestDeadLetterBeforeCheckpoint makes the dead-letter publish fail: the
// checkpoint does not pass the invalid event until its copy is acknowledged.
func TestDeadLetterBeforeCheckpoint(t *testing.T) {
	js := setup(t)
	ctx := context.Background()
	// A DLQ stream that does not take dlq.persons.> yet: publishes fail.
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PERSONS_DLQ", Subjects: []string{"elsewhere.>"}}); err != nil {
		t.Fatal(err)
	}
	c := newID()
	publishAll(t, js, []wireMsg{
		encodeMsg(t, consumerEv(c, 1, "Ann")),
		{subject: events.SubjectPrefixConsumer + c, body: []byte("garbage"), msgID: newID()},
		encodeMsg(t, consumerEv(c, 2, "Bea")),
	})
	s := openStore(t, t.TempDir(), StoreOptions{})
	logger, logs := logtest.Text()
	p := New(js, s, Config{BatchSize: 1, Logger: logger})
	runProjector(t, p)
	wait.For(t, 20*time.Second, func() error {
		if n := strings.Count(logs.String(), "dead-letter publish failed"); n < 3 {
			return fmt.Errorf("%d failed dead-letter publishes logged", n)
		}
		return nil
	})
	if got := p.Progress().AppliedSeq; got != 1 {
		t.Fatalf("checkpoint %d while the dead-letter copy of event 2 is not acknowledged, want 1", got)
	}
	if cp, _ := s.Checkpoint(); cp != 1 {
		t.Fatalf("stored checkpoint %d, want 1", cp)
	}
	if _, err := js.UpdateStream(ctx, jetstream.StreamConfig{Name: "PERSONS_DLQ", Subjects: []string{"dlq.persons.>"}}); err != nil {
		t.Fatal(err)
	}
	waitApplied(t, p, 3, 20*time.Second)
	if got := firstName(t, s, c); got != "Bea" {
		t.Errorf("consumer = %q, want Bea", got)
	}
	dlq, err := js.Stream(ctx, "PERSONS_DLQ")
	if err != nil {
		t.Fatal(err)
	}
	if n := dlq.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("DLQ holds %d messages, want 1", n)
	}
}

// TestNoPersonalDataInLogs projects valid and invalid signer events with
// debug logging and checks that no SSN or date of birth reaches the log.
func TestNoPersonalDataInLogs(t *testing.T) {
	js := setup(t)
	c, sid := newID(), newID()
	// The decoder's reasons quote example formats (123456789), so the
	// personal data here is distinct from them.
	signer := func(v uint64, ssn, dob string) wireMsg {
		e := signerEv(c, sid, v, "A")
		sg := e.Data.(events.Signer)
		sg.SSN, sg.DateOfBirth = "501234567", "1980-05-17"
		e.Data = sg
		m := encodeMsg(t, e)
		m.body = bytes.Replace(m.body, []byte(`"501234567"`), []byte(`"`+ssn+`"`), 1)
		m.body = bytes.Replace(m.body, []byte(`"1980-05-17"`), []byte(`"`+dob+`"`), 1)
		return m
	}
	valid := signer(1, "501234567", "1980-05-17")
	bad := signer(2, "50123456Z", "1980-05-17")
	badDOB := signer(3, "501234567", "1980-13-17")
	publishAll(t, js, []wireMsg{valid, bad, badDOB})

	logger, logs := logtest.Text()
	s, err := Open(t.TempDir(), StoreOptions{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	p := New(js, s, Config{Logger: logger})
	stop := runProjector(t, p)
	waitApplied(t, p, 3, 20*time.Second)
	if pr := p.Progress(); pr.DeadLettered != 2 {
		t.Fatalf("dead-lettered %d, want 2", pr.DeadLettered)
	}
	_ = stop()
	_ = s.Close()
	out := logs.String()
	if !strings.Contains(out, "dead-lettered") {
		t.Fatalf("log holds no dead-letter line, the check is void:\n%s", out)
	}
	for _, secret := range []string{"501234567", "50123456", "1980-05-17", "1980-13-17"} {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, secret) {
				t.Errorf("log contains %q: %s", secret, line)
			}
		}
	}
}

// TestDeadLetterOncePerEvent runs two replicas (separate stores) over the
// same stream, the second one after the DLQ's duplicate window has passed,
// and restarts one of them from scratch: each invalid event is in the DLQ
// once.
func TestDeadLetterOncePerEvent(t *testing.T) {
	js := setup(t)
	ctx := context.Background()
	const window = 100 * time.Millisecond
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "PERSONS_DLQ", Subjects: []string{"dlq.persons.>"}, Duplicates: window}); err != nil {
		t.Fatal(err)
	}
	c := newID()
	var msgs []wireMsg
	for i := range 6 {
		msgs = append(msgs, encodeMsg(t, consumerEv(c, uint64(i+1), "Ann")),
			wireMsg{subject: events.SubjectPrefixConsumer + c, body: []byte("garbage"), msgID: newID()})
	}
	publishAll(t, js, msgs)
	dlqCount := func() uint64 {
		t.Helper()
		dlq, err := js.Stream(ctx, "PERSONS_DLQ")
		if err != nil {
			t.Fatal(err)
		}
		return dlq.CachedInfo().State.Msgs
	}
	for replica := range 3 {
		start := time.Now()
		wait.For(t, 5*time.Second, func() error { // let the duplicate window pass
			if time.Since(start) < 2*window {
				return errors.New("duplicate window not over")
			}
			return nil
		})
		p := New(js, openStore(t, t.TempDir(), StoreOptions{}), Config{BatchSize: 1})
		stop := runProjector(t, p)
		waitApplied(t, p, uint64(len(msgs)), 20*time.Second)
		_ = stop()
		if pr := p.Progress(); pr.DeadLettered != 6 {
			t.Errorf("replica %d: dead-lettered %d, want 6", replica, pr.DeadLettered)
		}
		if n := dlqCount(); n != 6 {
			t.Fatalf("after replica %d: DLQ holds %d messages, want 6", replica, n)
		}
	}
}
