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
	"github.com/lookup/persons/internal/testing/testkit"
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

	var calls atomic.Int32
	s := openStore(t, t.TempDir(), StoreOptions{}, withApplyFault(func() error {
		if calls.Add(1) <= 3 {
			return errors.New("injected disk failure")
		}
		return nil
	}))
	logger, logs := testkit.TextLogger()
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
	ctx := t.Context()
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
	logger, logs := testkit.TextLogger()
	p := New(js, s, Config{BatchSize: 1, Logger: logger})
	runProjector(t, p)
	testkit.WaitFor(t, 20*time.Second, func() error {
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

	logger, logs := testkit.TextLogger()
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
	ctx := t.Context()
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
		testkit.WaitFor(t, 5*time.Second, func() error { // let the duplicate window pass
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

// projectAll runs a projector over PERSONS into s until it has applied seq,
// then stops it.
func projectAll(t *testing.T, js jetstream.JetStream, s *Store, seq uint64) {
	t.Helper()
	p := New(js, s, Config{})
	stop := runProjector(t, p)
	waitApplied(t, p, seq, 20*time.Second)
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// runUntilError runs p until it returns or 10 s pass (then it returns nil).
func runUntilError(t *testing.T, p *Projector) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	return p.Run(ctx)
}

func consumerMsgs(t *testing.T, n int) []wireMsg {
	t.Helper()
	var msgs []wireMsg
	for range n {
		msgs = append(msgs, encodeMsg(t, consumerEv(newID(), 1, "Ann")))
	}
	return msgs
}

// TestStreamIdentity: a store projected from one stream refuses another
// stream, or another incarnation of the same one, or a stream shorter than
// its checkpoint, with ErrStreamMismatch; nothing is skipped or projected.
func TestStreamIdentity(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name string
		// prepare builds the store's state and changes the server; it returns
		// the projector's config.
		prepare func(t *testing.T, js jetstream.JetStream, s *Store) Config
		want    []string // in the error, besides the sentinel
	}{
		{
			name: "stream deleted and created again",
			prepare: func(t *testing.T, js jetstream.JetStream, s *Store) Config {
				publishAll(t, js, consumerMsgs(t, 10))
				projectAll(t, js, s, 10)
				if err := js.DeleteStream(ctx, "PERSONS"); err != nil {
					t.Fatal(err)
				}
				createStream(t, js)
				publishAll(t, js, consumerMsgs(t, 3))
				return Config{}
			},
			want: []string{`"PERSONS" created`, "checkpoint 10"},
		},
		{
			name: "another stream",
			prepare: func(t *testing.T, js jetstream.JetStream, s *Store) Config {
				publishAll(t, js, consumerMsgs(t, 10))
				projectAll(t, js, s, 10)
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"}}); err != nil {
					t.Fatal(err)
				}
				for range 30 {
					if _, err := js.Publish(ctx, "other.x", []byte("{}")); err != nil {
						t.Fatal(err)
					}
				}
				return Config{Stream: "OTHER"}
			},
			want: []string{`records stream "PERSONS"`, `found stream "OTHER"`},
		},
		{
			name: "checkpoint beyond the stream's last sequence",
			prepare: func(t *testing.T, js jetstream.JetStream, s *Store) Config {
				publishAll(t, js, consumerMsgs(t, 3))
				info := mustStream(t, js).CachedInfo()
				if err := s.bindStream(streamIdentity{name: "PERSONS", created: info.Created}, true); err != nil {
					t.Fatal(err)
				}
				if _, err := s.applyBatch([]item{{seq: 10, valid: false}}); err != nil {
					t.Fatal(err)
				}
				return Config{}
			},
			want: []string{"checkpoint 10 is beyond the last sequence 3"},
		},
		{
			name: "checkpoint without a recorded identity",
			prepare: func(t *testing.T, js jetstream.JetStream, s *Store) Config {
				publishAll(t, js, consumerMsgs(t, 3))
				if _, err := s.applyBatch([]item{{seq: 2, valid: false}}); err != nil {
					t.Fatal(err)
				}
				return Config{}
			},
			want: []string{"records no stream identity"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := setup(t)
			s := openStore(t, t.TempDir(), StoreOptions{})
			cfg := tc.prepare(t, js, s)
			before, err := s.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			s.ident = nil // as after a restart
			p := New(js, s, cfg)
			checkMismatch(t, p, s, before, append(tc.want, "lookupd project --until-caught-up")...)
		})
	}

	t.Run("fresh store records the identity and runs again", func(t *testing.T) {
		js := setup(t)
		s := openStore(t, t.TempDir(), StoreOptions{})
		p := New(js, s, Config{})
		stop := runProjector(t, p)
		<-p.CaughtUp() // empty stream: identity recorded at first contact
		id, ok, err := s.streamIdentity()
		info := mustStream(t, js).CachedInfo()
		if err != nil || !ok || !id.equal(streamIdentity{name: "PERSONS", created: info.Created}) {
			t.Fatalf("identity = %v, %v, %v; want PERSONS created %v", id, ok, err, info.Created)
		}
		publishAll(t, js, consumerMsgs(t, 3))
		waitApplied(t, p, 3, 20*time.Second)
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		s.ident = nil
		p = New(js, s, Config{})
		stop = runProjector(t, p)
		select {
		case <-p.CaughtUp():
		case <-time.After(20 * time.Second):
			t.Fatalf("restart on the same stream: not caught up: %+v", p.Progress())
		}
		if err := stop(); err != nil {
			t.Fatalf("restart on the same stream: Run = %v", err)
		}
	})
}

// TestCaughtUpAfterLastMessageDeleted: the stream's last message was deleted
// after the checkpoint; a restarted projector has nothing left to read and
// is caught up, though its checkpoint is below the stream's last sequence.
func TestCaughtUpAfterLastMessageDeleted(t *testing.T) {
	js := setup(t)
	publishAll(t, js, consumerMsgs(t, 13))
	if err := mustStream(t, js).DeleteMsg(t.Context(), 13); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, t.TempDir(), StoreOptions{})
	for run := range 2 {
		p := New(js, s, Config{})
		stop := runProjector(t, p)
		select {
		case <-p.CaughtUp():
		case <-time.After(20 * time.Second):
			t.Fatalf("run %d: not caught up: %+v", run, p.Progress())
		}
		if pr := p.Progress(); pr.AppliedSeq != 12 || pr.TargetSeq != 13 {
			t.Errorf("run %d: applied %d, target %d; want 12, 13", run, pr.AppliedSeq, pr.TargetSeq)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDLQDeletedWhileRunning: the projector creates the DLQ again when it
// was deleted under it, and projection goes on.
func TestDLQDeletedWhileRunning(t *testing.T) {
	js := setup(t)
	ctx := t.Context()
	p := New(js, openStore(t, t.TempDir(), StoreOptions{}), Config{})
	runProjector(t, p)
	publishAll(t, js, consumerMsgs(t, 1))
	waitApplied(t, p, 1, 20*time.Second)
	if err := js.DeleteStream(ctx, "PERSONS_DLQ"); err != nil {
		t.Fatal(err)
	}
	c := newID()
	publishAll(t, js, []wireMsg{
		{subject: events.SubjectPrefixConsumer + c, body: []byte("garbage"), msgID: newID()},
		encodeMsg(t, consumerEv(c, 1, "Bea")),
	})
	waitApplied(t, p, 3, 20*time.Second)
	if got := firstName(t, p.store, c); got != "Bea" {
		t.Errorf("first name = %q, want Bea", got)
	}
	dlq, err := js.Stream(ctx, "PERSONS_DLQ")
	if err != nil {
		t.Fatalf("DLQ not re-created: %v", err)
	}
	if n := dlq.CachedInfo().State.Msgs; n != 1 {
		t.Errorf("DLQ holds %d messages, want 1", n)
	}
	if got := dlq.CachedInfo().Config.MaxBytes; got != DLQStreamConfig("PERSONS_DLQ").MaxBytes {
		t.Errorf("re-created DLQ max_bytes = %d, want %d", got, DLQStreamConfig("PERSONS_DLQ").MaxBytes)
	}
}

// TestDLQCreatedWithLimits: the DLQ the projector creates has the limits of
// DLQStreamConfig (which a test in integration keeps equal to
// deploy/streams/persons_dlq.json).
func TestDLQCreatedWithLimits(t *testing.T) {
	js := setup(t)
	p := New(js, openStore(t, t.TempDir(), StoreOptions{}), Config{})
	runProjector(t, p)
	<-p.CaughtUp()
	var info *jetstream.StreamInfo
	testkit.WaitFor(t, 10*time.Second, func() error {
		dlq, err := js.Stream(t.Context(), "PERSONS_DLQ")
		if err != nil {
			return err
		}
		info = dlq.CachedInfo()
		return nil
	})
	want := DLQStreamConfig("PERSONS_DLQ")
	got := info.Config
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"max_msgs", got.MaxMsgs, want.MaxMsgs},
		{"max_bytes", got.MaxBytes, want.MaxBytes},
		{"max_age", got.MaxAge, want.MaxAge},
		{"max_msg_size", got.MaxMsgSize, want.MaxMsgSize},
		{"discard", got.Discard, want.Discard},
		{"duplicate_window", got.Duplicates, want.Duplicates},
		{"compression", got.Compression, want.Compression},
		{"storage", got.Storage, want.Storage},
		{"allow_direct", got.AllowDirect, want.AllowDirect},
		{"subjects", fmt.Sprint(got.Subjects), fmt.Sprint(want.Subjects)},
	} {
		if c.got != c.want {
			t.Errorf("DLQ %s = %v, want %v", c.field, c.got, c.want)
		}
	}
	if want.MaxBytes <= 0 || want.MaxAge <= 0 {
		t.Errorf("DLQStreamConfig has no limits: %+v", want)
	}
}

// TestEncryptionKeyErrors: each way a key can be rejected says what is wrong.
func TestEncryptionKeyErrors(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	plainDir, encDir := t.TempDir(), t.TempDir()
	for _, c := range []struct {
		dir string
		key []byte
	}{{plainDir, nil}, {encDir, key}} {
		s, err := Open(c.dir, StoreOptions{EncryptionKey: c.key})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		dir  string
		key  []byte
		want string
	}{
		{"20-byte key, new dir", t.TempDir(), make([]byte, 20), "key is 20 bytes, want 16, 24 or 32"},
		{"key for an unencrypted store", plainDir, key, "the store is not encrypted but a key was given"},
		{"no key for an encrypted store", encDir, nil, "the store is encrypted and no key was given"},
		{"wrong key", encDir, bytes.Repeat([]byte{8}, 32), "the key does not decrypt this store"},
		{"wrong key of another length", encDir, bytes.Repeat([]byte{8}, 16), "the key does not decrypt this store"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.dir, StoreOptions{EncryptionKey: tc.key})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, ErrEncryptionKey) {
				t.Errorf("err = %v, want ErrEncryptionKey", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %q, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "does not match") {
				t.Errorf("err = %q still says the key does not match", err)
			}
		})
	}
}

// TestNoWarningAtShutdown: a shutdown that interrupts a step of Run logs no
// "stream unavailable" warning.
func TestNoWarningAtShutdown(t *testing.T) {
	js := setup(t)
	logger, logs := testkit.TextLogger()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	p := newProjector(js, openStore(t, t.TempDir(), StoreOptions{}), Config{Logger: logger},
		withEnsureDLQHook(cancel)) // shut down while the DLQ is being looked up
	if err := p.Run(ctx); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if strings.Contains(logs.String(), "stream unavailable") {
		t.Errorf("warning at a clean shutdown:\n%s", logs.String())
	}
}

// TestStreamReplacedWhileRunning: the stream is deleted and created again
// while the projector runs; Run returns (ErrStreamNotFound if it saw the
// deletion, else ErrStreamMismatch) and projects nothing of the new stream.
func TestStreamReplacedWhileRunning(t *testing.T) {
	js := setup(t)
	publishAll(t, js, consumerMsgs(t, 5))
	s := openStore(t, t.TempDir(), StoreOptions{})
	p := New(js, s, Config{RefreshInterval: 50 * time.Millisecond})
	errc := make(chan error, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { errc <- p.Run(ctx) }()
	waitApplied(t, p, 5, 20*time.Second)
	if err := js.DeleteStream(ctx, "PERSONS"); err != nil {
		t.Fatal(err)
	}
	createStream(t, js)
	publishAll(t, js, consumerMsgs(t, 8))
	select {
	case err := <-errc:
		if !errors.Is(err, ErrStreamMismatch) && !errors.Is(err, ErrStreamNotFound) {
			t.Fatalf("Run err = %v, want ErrStreamMismatch or ErrStreamNotFound", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Run did not return after the stream was replaced: %+v", p.Progress())
	}
	if cp, err := s.Checkpoint(); err != nil || cp != 5 {
		t.Errorf("checkpoint = %d, %v; want 5", cp, err)
	}
}
