// Package erasuretest writes the erasure's evidence with the real eraser
// (internal/erasure), for the tests of the evidence's readers: the
// officer's person page and lookupd audit serve, which never read the
// source stream and so see a deletion by its evidence alone.
//
// Its contract: the events are published to the stream PERSONS, the
// erasure runs as lookupd serve's does (erasure.Eraser.Run, its lease, its
// steps, its records), over a model that has applied the deletion
// published, and each call ends once erasure.Status reads from the
// evidence alone that the stream is cleared. Imported by test files only.
package erasuretest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// Streams are the names the eraser erases from.
const (
	Stream    = "PERSONS"
	DLQStream = "PERSONS_DLQ"
)

// Erased is a deletion erased.
type Erased struct {
	Deletion projector.Deletion
	// Eraser is the eraser that erased it (stopped), to record a
	// compaction of its replica's files (RecordCompaction).
	Eraser *erasure.Eraser
}

// DeleteConsumer publishes to PERSONS (which must exist: testkit's
// PersonsStream) the consumer consumerID, its signers signerIDs, then
// the consumer's deletion, and erases them with an erasure.Eraser of the
// replica "replica-a" into the erasure bucket bucket ("":
// erasure.DefaultBucket).
func DeleteConsumer(t testing.TB, js jetstream.JetStream, bucket, consumerID string, signerIDs ...string) Erased {
	t.Helper()
	ctx := context.Background()
	pub := events.NewPublisher(js)
	publish := func(version uint64, data any) uint64 {
		ev, err := events.NewEvent("urn:erasuretest", version, data)
		if err != nil {
			t.Fatal(err)
		}
		seq, err := pub.Publish(ctx, ev)
		if err != nil {
			t.Fatalf("publish to %s: %v", Stream, err)
		}
		return seq
	}
	publish(1, events.Consumer{ConsumerID: consumerID, BusinessID: "9d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d", FirstName: "Ada", LastName: "Zyxwvutsrq"})
	for _, id := range signerIDs {
		publish(1, events.Signer{SignerID: id, ConsumerID: consumerID, FirstName: "Quintessa", LastName: "Qwertyuiop",
			AccountAccess: "PHI", Status: "ACTIVE", Type: "AUTHORIZED_SIGNER", SSN: "987654329"})
	}
	seq := publish(2, events.ConsumerDeleted{ConsumerID: consumerID})
	st, err := js.Stream(ctx, Stream)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.GetMsg(ctx, seq)
	if err != nil {
		t.Fatal(err)
	}
	d := projector.Deletion{Seq: seq, Time: m.Time, Entity: events.Entity{Kind: events.KindConsumer, ID: consumerID, ConsumerID: consumerID}}
	e, err := erasure.New(erasure.Config{JS: js, Stream: Stream, DLQStream: DLQStream, Bucket: bucket, Model: model{d},
		Replica: "replica-a", Delay: time.Hour, Poll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(runCtx) }() // it returns runCtx's error
	defer func() { cancel(); <-done }()
	testkit.WaitFor(t, 20*time.Second, func() error {
		rep, err := erasure.Status(ctx, erasure.StatusConfig{JS: js, Bucket: bucket}, consumerID)
		if err != nil {
			return err
		}
		if len(rep.Entities) != 1 || len(rep.Entities[0].Places) == 0 || !rep.Entities[0].Places[0].Clear() {
			return fmt.Errorf("the evidence says %+v", rep)
		}
		return nil
	})
	return Erased{Deletion: d, Eraser: e}
}

// model is a replica's model that has applied one deletion.
type model struct{ d projector.Deletion }

func (m model) Deletions(ctx context.Context, after uint64, fn func(projector.Deletion) error) error {
	if m.d.Seq > after {
		if err := fn(m.d); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func (model) Snapshot(context.Context) (projector.SnapshotInfo, string, error) {
	return projector.SnapshotInfo{}, "", errors.New("erasuretest: no snapshots")
}

func (model) Compacted() (replica.CompactionInfo, error) { return replica.CompactionInfo{}, nil }
