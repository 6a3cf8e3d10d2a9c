package projector

import (
	"context"
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
