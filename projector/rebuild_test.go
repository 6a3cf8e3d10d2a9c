package projector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/events"
)

// setKeys counts the signer sets in s.
func setKeys(t testing.TB, s *Store) int {
	t.Helper()
	n := 0
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badgerIterOpts([]byte{tagSignerSet}))
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRebuildMakesSignerSetsOnceCaughtUp projects a stream into an empty
// store: until it has caught up the projector keeps no signer sets and
// Signers reads the records; when it says it has caught up, every set is
// made and the marker holds the checkpoint; after that the sets are kept
// event by event.
func TestRebuildMakesSignerSetsOnceCaughtUp(t *testing.T) {
	js := setup(t)
	msgs := genStream(t, rand.New(rand.NewPCG(11, 12)), 3000)
	publishAll(t, js, msgs)
	last := streamLastSeq(t, js)

	s := openStore(t, t.TempDir(), StoreOptions{})
	var commits, deferred, withSets int
	var midErr error
	p := newProjector(js, s, Config{BatchSize: 100}, withAfterCommit(func(seq uint64) {
		if seq >= last || midErr != nil {
			return
		}
		commits++
		if s.setsDeferred.Load() {
			deferred++
		}
		if setKeys(t, s) > 0 {
			withSets++
		}
		// Signers reads the records meanwhile: a consumer with live signers
		// has them.
		for _, m := range msgs[:seq] {
			if sg, ok := m.ev.Data.(events.Signer); ok && m.valid {
				_, got, err := s.Signers(context.Background(), sg.ConsumerID)
				if err == nil && len(got) == 0 {
					var recs []events.Signer
					err := s.db.View(func(txn *badger.Txn) (err error) {
						recs, err = scanSigners(txn, sg.ConsumerID, nil)
						return err
					})
					if err == nil && len(recs) > 0 {
						midErr = fmt.Errorf("Signers(%s) = no signers, the records %d", sg.ConsumerID, len(recs))
					}
				}
				break
			}
		}
	}))
	runProjector(t, p)
	select {
	case <-p.CaughtUp():
	case <-time.After(30 * time.Second):
		t.Fatalf("not caught up: %+v", p.Progress())
	}
	// At the moment it says so, the sets are those of the records.
	checkSignerSets(t, s)
	if s.setsDeferred.Load() {
		t.Error("sets still deferred once caught up")
	}
	if commits == 0 || deferred != commits || withSets != 0 || midErr != nil {
		t.Errorf("before catching up: %d commits, %d with the sets deferred, %d with sets in the store, %v; want every one deferred and none with sets", commits, deferred, withSets, midErr)
	}
	want, _, _, _ := reference(msgs)
	compareState(t, dump(t, s), want)

	// After catching up, the sets are kept at each event.
	more := genStream(t, rand.New(rand.NewPCG(13, 14)), 500)
	publishAll(t, js, more)
	waitApplied(t, p, streamLastSeq(t, js), 30*time.Second)
	checkSignerSets(t, s)
}

// TestRebuildStoppedBeforeCaughtUp stops a rebuild part-way, before its
// signer sets are made: the store's next Open makes them from the
// records, and the projection goes on to the same state as an undisturbed
// one.
func TestRebuildStoppedBeforeCaughtUp(t *testing.T) {
	js := setup(t)
	msgs := genStream(t, rand.New(rand.NewPCG(15, 16)), 3000)
	publishAll(t, js, msgs)
	last := streamLastSeq(t, js)
	dir := t.TempDir()

	s, err := Open(dir, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	reached := make(chan struct{})
	p := newProjector(js, s, Config{BatchSize: 100}, withAfterCommit(func(seq uint64) {
		if seq >= last/3 {
			select {
			case <-reached:
			default:
				close(reached)
			}
			<-ctx.Done() // hold the writer until the test has stopped it
		}
	}))
	errc := make(chan error, 1)
	go func() { errc <- p.Run(ctx) }()
	select {
	case <-reached:
	case <-time.After(30 * time.Second):
		t.Fatalf("checkpoint %d did not reach %d", p.Progress().AppliedSeq, last/3)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !s.setsDeferred.Load() || setKeys(t, s) != 0 {
		t.Fatalf("stopped part-way: sets deferred %v, %d sets; want deferred and none", s.setsDeferred.Load(), setKeys(t, s))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = openStore(t, dir, StoreOptions{})
	checkSignerSets(t, s) // made at Open
	p = New(js, s, Config{BatchSize: 100})
	runProjector(t, p)
	waitApplied(t, p, last, 30*time.Second)
	<-p.CaughtUp()
	checkSignerSets(t, s)
	want, _, _, _ := reference(msgs)
	compareState(t, dump(t, s), want)
}

// TestFinishSetsStoppedPartWay stops the making of deferred sets (its
// context done) and makes them again: the sets stay deferred until a
// build completes, and one that completes after a stopped one leaves no
// set of the stopped one behind.
func TestFinishSetsStoppedPartWay(t *testing.T) {
	s := openStore(t, t.TempDir(), StoreOptions{})
	if err := s.deferSetsIfEmpty(); err != nil {
		t.Fatal(err)
	}
	const c1, c2 = "0c0c0c0c-0000-4000-8000-000000000001", "0c0c0c0c-0000-4000-8000-000000000002"
	var batch []item
	for i, ev := range []events.Event{
		{EntityVersion: 1, Data: events.Consumer{ConsumerID: c1, BusinessID: testBiz, FirstName: "A", LastName: "L"}},
		{EntityVersion: 1, Data: fullSigner(c1, "5a5a5a5a-0000-4000-8000-000000000001", "S")},
		{EntityVersion: 1, Data: fullSigner(c2, "5a5a5a5a-0000-4000-8000-000000000002", "T")},
		{EntityVersion: 2, Data: events.SignerDeleted{ConsumerID: c2, SignerID: "5a5a5a5a-0000-4000-8000-000000000002"}},
	} {
		batch = append(batch, item{valid: true, ev: ev, seq: uint64(i + 1)})
	}
	if _, err := s.applyBatch(batch); err != nil {
		t.Fatal(err)
	}

	stopped, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.finishSets(stopped); !errors.Is(err, context.Canceled) {
		t.Fatalf("finishSets with its context done: %v, want context.Canceled", err)
	}
	if !s.setsDeferred.Load() {
		t.Fatal("sets no longer deferred after a stopped build")
	}
	// What a build stopped later might have left: a set for c2, whose
	// signer is gone since.
	if err := s.db.Update(func(txn *badger.Txn) error {
		var set signerSet
		set.put("5a5a5a5a-0000-4000-8000-000000000002", []byte("stale"))
		return txn.Set(entityKey(tagSignerSet, c2), set.encode())
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.finishSets(t.Context()); err != nil {
		t.Fatal(err)
	}
	if s.setsDeferred.Load() {
		t.Error("sets still deferred after a build")
	}
	checkSignerSets(t, s)
}
