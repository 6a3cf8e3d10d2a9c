package erasure

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

const (
	consumerID = "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01"
	signer1    = "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e61"
	signer2    = "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e62"
	contactID  = "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	businessID = "9d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
)

// model is the read model as the eraser sees it: the deletions the test
// says were applied, and snapshots it writes to the bucket by hand.
type model struct {
	mu        sync.Mutex
	deletions []projector.Deletion
	snapshot  func(ctx context.Context) (projector.SnapshotInfo, string, error)
}

func (m *model) Deletions(ctx context.Context, after uint64, fn func(projector.Deletion) error) error {
	m.mu.Lock()
	ds := slices.Clone(m.deletions)
	m.mu.Unlock()
	for _, d := range ds {
		if d.Seq <= after {
			continue
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (m *model) Snapshot(ctx context.Context) (projector.SnapshotInfo, string, error) {
	if m.snapshot == nil {
		return projector.SnapshotInfo{}, "", errors.New("no snapshot in this test")
	}
	return m.snapshot(ctx)
}

func (m *model) Compacted() (replica.CompactionInfo, error) { return replica.CompactionInfo{}, nil }

func (m *model) add(d projector.Deletion) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.deletions = append(m.deletions, d)
}

type fixture struct {
	js     jetstream.JetStream
	stream jetstream.Stream
	pub    *events.Publisher
	model  *model
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	_, js := testkit.StartNATS(t)
	st := testkit.PersonsStream(t, js)
	if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: "PERSONS_DLQ", Subjects: []string{"dlq.persons.>"}}); err != nil {
		t.Fatal(err)
	}
	return &fixture{js: js, stream: st, pub: events.NewPublisher(js), model: &model{}}
}

func (f *fixture) publish(t *testing.T, version uint64, data any) uint64 {
	t.Helper()
	ev, err := events.NewEvent("urn:test", version, data)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := f.pub.Publish(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

func signer(id, last, ssn string) events.Signer {
	return events.Signer{SignerID: id, ConsumerID: consumerID, FirstName: "Quintessa", LastName: last,
		AccountAccess: "PHI", Status: "ACTIVE", Type: "AUTHORIZED_SIGNER", SSN: ssn}
}

// seed publishes a consumer (two versions), two signers, a contact and a
// dead letter of the consumer, then deletes the consumer; it returns the
// deletion's sequence.
func (f *fixture) seed(t *testing.T) uint64 {
	t.Helper()
	f.publish(t, 1, events.Consumer{ConsumerID: consumerID, BusinessID: businessID, FirstName: "Ada", LastName: "Zyxwvutsrq"})
	f.publish(t, 2, events.Consumer{ConsumerID: consumerID, BusinessID: businessID, FirstName: "Ada", LastName: "Zyxwvutsrq-Lovelace"})
	f.publish(t, 1, signer(signer1, "Qwertyuiop", "987654329"))
	f.publish(t, 1, signer(signer2, "Asdfghjkl", "987654328"))
	f.publish(t, 1, events.BusinessContact{ContactID: contactID, BusinessID: businessID, FirstName: "Grace", LastName: "Hopper"})
	if _, err := f.js.Publish(t.Context(), "dlq.persons.consumer."+consumerID, []byte(`{"not":"valid","last_name":"Zyxwvutsrq"}`)); err != nil {
		t.Fatal(err)
	}
	seq := f.publish(t, 3, events.ConsumerDeleted{ConsumerID: consumerID})
	f.model.add(projector.Deletion{Seq: seq, Time: time.Now(), Entity: events.Entity{Kind: events.KindConsumer, ID: consumerID, ConsumerID: consumerID}})
	return seq
}

func (f *fixture) eraser(t *testing.T, name string) *Eraser {
	t.Helper()
	e, err := New(Config{JS: f.js, Stream: "PERSONS", DLQStream: "PERSONS_DLQ", Model: f.model, Replica: name,
		Delay: time.Hour, Poll: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (f *fixture) pass(t *testing.T, e *Eraser) error {
	t.Helper()
	kv, err := Bucket(t.Context(), f.js, DefaultBucket, true)
	if err != nil {
		t.Fatal(err)
	}
	return e.pass(t.Context(), kv)
}

// sequences lists the sequences of the stream's messages on subject.
func sequences(t *testing.T, s jetstream.Stream, subject string) []uint64 {
	t.Helper()
	var out []uint64
	for seq := uint64(1); ; {
		m, err := s.GetMsg(t.Context(), seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Sequence)
		seq = m.Sequence + 1
	}
}

func TestEraserErasesAConsumerAndItsSigners(t *testing.T) {
	f := newFixture(t)
	del := f.seed(t)
	if got := sequences(t, f.stream, "persons.>"); len(got) != 6 {
		t.Fatalf("before: %d messages, want 6", len(got))
	}
	if err := f.pass(t, f.eraser(t, "r1")); err != nil {
		t.Fatal(err)
	}
	if got := sequences(t, f.stream, "persons.consumer."+consumerID); !slices.Equal(got, []uint64{del}) {
		t.Errorf("consumer's messages %v, want only the deletion %d", got, del)
	}
	if got := sequences(t, f.stream, "persons.authorized_signer."+consumerID+".*"); len(got) != 0 {
		t.Errorf("signers' messages %v, want none", got)
	}
	if got := sequences(t, f.stream, "persons.business_contact.*"); len(got) != 1 {
		t.Errorf("the contact's messages %v, want its one, untouched", got)
	}
	dlq, err := f.js.Stream(t.Context(), "PERSONS_DLQ")
	if err != nil {
		t.Fatal(err)
	}
	if got := sequences(t, dlq, "dlq.persons.>"); len(got) != 0 {
		t.Errorf("dead letters %v, want none", got)
	}
	rep, err := Status(t.Context(), StatusConfig{JS: f.js, Live: true, Stream: "PERSONS", DLQStream: "PERSONS_DLQ"}, strings.ToUpper(signer1))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Entities) != 1 || !rep.Entities[0].Deleted || rep.Entities[0].ErasedWith != consumerID ||
		!rep.Entities[0].Places[0].Clear() || rep.Entities[0].Places[0].At.IsZero() {
		t.Errorf("a signer erased with its consumer: %+v", rep.Entities)
	}
	rep, err = Status(t.Context(), StatusConfig{JS: f.js, Live: true, Stream: "PERSONS", DLQStream: "PERSONS_DLQ"}, consumerID)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Entities) != 1 {
		t.Fatalf("status: %+v", rep)
	}
	st := rep.Entities[0]
	if !st.Deleted || st.DeletionSeq != del || len(st.Places) < 2 || !st.Places[0].Clear() || !st.Places[1].Clear() || st.Places[0].At.IsZero() {
		t.Errorf("status %+v", st)
	}
	kv, err := Bucket(t.Context(), f.js, DefaultBucket, false)
	if err != nil {
		t.Fatal(err)
	}
	rec, ok, err := getEntity(t.Context(), kv, entityKey("consumer", consumerID, consumerID))
	if err != nil || !ok || rec.Messages != 2 || rec.DeadLetters != 1 || rec.Seq != del {
		t.Errorf("evidence %+v (%v, %v), want 2 messages and 1 dead letter erased", rec, ok, err)
	}
	for _, id := range []string{signer1, signer2} {
		rec, ok, err := getEntity(t.Context(), kv, entityKey("authorized_signer", consumerID, id))
		if err != nil || !ok || rec.Messages != 1 || rec.ErasedWith != consumerID || rec.Seq != del {
			t.Errorf("signer %s's evidence %+v (%v, %v)", id, rec, ok, err)
		}
	}
	// The evidence alone (the accounting service, which knows neither
	// stream's name) says the same, and names the stream and the dead
	// letters from the evidence.
	rep, err = Status(t.Context(), StatusConfig{JS: f.js}, signer2)
	if err != nil || len(rep.Entities) != 1 || !rep.Entities[0].Places[0].Clear() || !rep.Entities[0].Places[1].Clear() {
		t.Fatalf("from the evidence: %+v, %v", rep, err)
	}
	if p := rep.Entities[0].Places; p[0].Place != "stream" || p[0].Name != "PERSONS" || p[1].Place != "dead_letters" || p[1].Name != "PERSONS_DLQ" {
		t.Errorf("from the evidence, the places are named %+v, want the stream PERSONS and the dead letters PERSONS_DLQ", p)
	}
	rec, _, err = getEntity(t.Context(), kv, entityKey("consumer", consumerID, consumerID))
	if err != nil || rec.Stream != "PERSONS" || rec.DLQStream != "PERSONS_DLQ" {
		t.Errorf("the evidence names the stream %q and the dead letters %q (%v)", rec.Stream, rec.DLQStream, err)
	}
}

// TestEraserKeepsLaterMessages: a re-creation after the deletion stays.
func TestEraserKeepsLaterMessages(t *testing.T) {
	f := newFixture(t)
	del := f.seed(t)
	again := f.publish(t, 4, events.Consumer{ConsumerID: consumerID, BusinessID: businessID, FirstName: "Ada", LastName: "Again"})
	if err := f.pass(t, f.eraser(t, "r1")); err != nil {
		t.Fatal(err)
	}
	if got := sequences(t, f.stream, "persons.consumer."+consumerID); !slices.Equal(got, []uint64{del, again}) {
		t.Errorf("consumer's messages %v, want %d and %d", got, del, again)
	}
	rep, err := Status(t.Context(), StatusConfig{JS: f.js, Live: true, Stream: "PERSONS", DLQStream: "PERSONS_DLQ"}, consumerID)
	if err != nil || len(rep.Entities) != 1 || rep.Entities[0].Deleted {
		t.Errorf("status %+v, %v: want a consumer that is not deleted", rep, err)
	}
}

// TestEraserResumesAfterAnInterruption: a pass cut at each step (a crash,
// a SIGTERM, a lost connection) is finished by the next, by the same or
// another replica, and the evidence counts each message once.
func TestEraserResumesAfterAnInterruption(t *testing.T) {
	for _, step := range []string{"stream", "dlq", "cursor"} {
		t.Run(step, func(t *testing.T) {
			f := newFixture(t)
			del := f.seed(t)
			e := f.eraser(t, "r1")
			e.hook = func(what string) error {
				if what == step {
					return errors.New("cut at " + what)
				}
				return nil
			}
			if err := f.pass(t, e); err == nil {
				t.Fatal("the cut pass returned no error")
			}
			e.lease.release(t.Context(), mustBucket(t, f.js))
			if err := f.pass(t, f.eraser(t, "r2")); err != nil {
				t.Fatal(err)
			}
			if got := sequences(t, f.stream, "persons.consumer."+consumerID+" "); len(got) != 0 {
				t.Fatal("a subject with a space matched")
			}
			if got := sequences(t, f.stream, "persons.>"); len(got) != 2 || got[0] > del {
				t.Errorf("messages left %v, want the contact's and the deletion %d", got, del)
			}
			rec, ok, err := getEntity(t.Context(), mustBucket(t, f.js), entityKey("consumer", consumerID, consumerID))
			if err != nil || !ok || rec.DeadLetters != 1 {
				t.Errorf("evidence %+v, %v, %v", rec, ok, err)
			}
			c, _, err := readCursor(t.Context(), mustBucket(t, f.js))
			if err != nil || c.Seq != del {
				t.Errorf("cursor %+v, %v; want at %d", c, err, del)
			}
		})
	}
}

func mustBucket(t *testing.T, js jetstream.JetStream) jetstream.KeyValue {
	t.Helper()
	kv, err := Bucket(t.Context(), js, DefaultBucket, true)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// TestOneReplicaErases: of two replicas, one holds the lease; when it
// stops, the other takes over.
func TestOneReplicaErases(t *testing.T) {
	f := newFixture(t)
	f.seed(t)
	a, b := f.eraser(t, "a"), f.eraser(t, "b")
	if err := f.pass(t, a); err != nil {
		t.Fatal(err)
	}
	var cut []string
	b.hook = func(what string) error { cut = append(cut, what); return nil }
	if err := f.pass(t, b); err != nil {
		t.Fatal(err)
	}
	if len(cut) != 0 || b.lease.still(time.Now()) {
		t.Fatalf("the replica without the lease acted: %v", cut)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) { // Run releases the lease on its way out
		t.Fatalf("Run: %v", err)
	}
	if err := f.pass(t, b); err != nil || !b.lease.still(time.Now()) {
		t.Fatalf("after a stopped: b holds the lease %v (%v)", b.lease.still(time.Now()), err)
	}
}

// TestSnapshotsOlderThanTheDeletionGo: a snapshot at or beyond the
// deletion is written first, then the older ones are deleted.
func TestSnapshotsOlderThanTheDeletionGo(t *testing.T) {
	f := newFixture(t)
	sn, err := projector.NewSnapshots(f.js, projector.SnapshotsConfig{Bucket: "snaps"})
	if err != nil {
		t.Fatal(err)
	}
	obs, err := f.js.CreateObjectStore(t.Context(), jetstream.ObjectStoreConfig{Bucket: "snaps"})
	if err != nil {
		t.Fatal(err)
	}
	put := func(pos uint64) (projector.SnapshotInfo, string, error) {
		name := fmt.Sprintf("PERSONS-%020d", pos)
		_, err := obs.PutBytes(t.Context(), name, []byte("old model, with Zyxwvutsrq"))
		if err == nil {
			err = obs.UpdateMeta(t.Context(), name, jetstream.ObjectMeta{Name: name,
				Metadata: map[string]string{"stream": "PERSONS", "position": strconv.FormatUint(pos, 10)}})
		}
		return projector.SnapshotInfo{Stream: "PERSONS", Position: pos}, name, err
	}
	if _, _, err := put(2); err != nil {
		t.Fatal(err)
	}
	del := f.seed(t)
	f.model.snapshot = func(context.Context) (projector.SnapshotInfo, string, error) { return put(del) }
	e, err := New(Config{JS: f.js, Stream: "PERSONS", DLQStream: "PERSONS_DLQ", Model: f.model, Replica: "r1",
		Snapshots: sn, Delay: time.Millisecond, Poll: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, func() error {
		if err := f.pass(t, e); err != nil {
			return err
		}
		stored, err := sn.Stored(t.Context(), "PERSONS")
		if err != nil || len(stored) != 1 || stored[0].Position != del {
			return fmt.Errorf("stored %+v, %w; want one snapshot at %d", stored, err, del)
		}
		return nil
	})
	rep, err := Status(t.Context(), StatusConfig{JS: f.js, Live: true, Stream: "PERSONS", DLQStream: "PERSONS_DLQ", Snapshots: sn}, consumerID)
	if err != nil || len(rep.Entities) != 1 || len(rep.Entities[0].Places) != 3 || !rep.Entities[0].Places[2].Clear() || rep.Entities[0].Places[2].At.IsZero() {
		t.Fatalf("status %+v, %v", rep, err)
	}
	// The evidence alone (the accounting service) names the bucket too.
	rep, err = Status(t.Context(), StatusConfig{JS: f.js}, consumerID)
	if err != nil || len(rep.Entities) != 1 || len(rep.Entities[0].Places) != 3 {
		t.Fatalf("from the evidence: %+v, %v", rep, err)
	}
	if p := rep.Entities[0].Places[2]; p.Place != "snapshots" || p.Name != "snaps" || !p.Clear() || p.At.IsZero() {
		t.Errorf("from the evidence, the snapshots: %+v", p)
	}
}

// TestAHolderThatDiesLosesTheLease: a holder that stops renewing (a
// SIGKILL) is replaced once its lease has expired, and not before.
func TestAHolderThatDiesLosesTheLease(t *testing.T) {
	f := newFixture(t)
	a, b := f.eraser(t, "a"), f.eraser(t, "b")
	if err := f.pass(t, a); err != nil || !a.lease.held() {
		t.Fatalf("a: held %v, %v", a.lease.held(), err)
	}
	taken := time.Now()
	testkit.WaitFor(t, 10*time.Second, func() error {
		if err := f.pass(t, b); err != nil {
			return err
		}
		if !b.lease.held() {
			return errors.New("b does not hold the lease yet")
		}
		return nil
	})
	if waited := time.Since(taken); waited < a.lease.ttl-100*time.Millisecond {
		t.Errorf("b took the lease %v after a, before a's lease of %v expired", waited, a.lease.ttl)
	}
	if err := f.pass(t, a); err != nil || a.lease.held() {
		t.Errorf("a, back: held %v (%v), want b's lease respected", a.lease.held(), err)
	}
}
