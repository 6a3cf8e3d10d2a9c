package projector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lookup/persons/events"
)

// allDeletions returns every deletion record of s, in the order Deletions
// gives them.
func allDeletions(t *testing.T, s *Store, after uint64) []Deletion {
	t.Helper()
	var out []Deletion
	if err := s.Deletions(t.Context(), after, func(d Deletion) error {
		out = append(out, d)
		return nil
	}); err != nil {
		t.Fatalf("Deletions: %v", err)
	}
	return out
}

// itemTime is the stream time applyAll gives the event at sequence seq
// of a batch that started after checkpoint cp.
func itemTime(cp, seq uint64) time.Time {
	return time.Unix(1700000000, int64(seq-cp-1)).UTC() //nolint:gosec // G115: a small index
}

// TestDeletionsRecorded: each of the three kinds of deletion, when
// applied, is recorded with its sequence, stream time and ids, in stream
// order; a stale or duplicate deletion, an upsert and an invalid event are
// not. The records survive a restart and a snapshot's restore.
func TestDeletionsRecorded(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := s
	t.Cleanup(func() {
		if s == first { // not closed by the restart
			_ = s.Close()
		}
	})
	s.ident = encodeIdentity(streamIdentity{name: "PERSONS", created: time.Unix(1600000000, 0)})
	c1, c2, k1, k2, s1, s2 := newID(), newID(), newID(), newID(), newID(), newID()
	applyAll(t, s, consumerEv(c1, 1, "Ann"), signerEv(c1, s1, 1, "Sig"), consumerEv(c2, 1, "Bob"),
		signerEv(c2, s2, 1, "Sue"), contactEv(k1, 1, "Kim"), contactEv(k2, 5, "Kay")) // 1-6
	if last, err := s.LastDeletion(); err != nil || last != 0 {
		t.Fatalf("LastDeletion before any deletion = %d, %v; want 0", last, err)
	}
	st := applyAll(t, s,
		consumerDelEv(c1, 2),     // 7: applied
		contactDelEv(k2, 3),      // 8: stale, skipped
		signerDelEv(c2, s2, 2),   // 9: applied
		contactDelEv(k1, 2),      // 10: applied
		contactDelEv(k1, 2),      // 11: duplicate, skipped
		consumerEv(c2, 2, "Bo"),  // 12: an upsert
		signerDelEv(c1, s1, 1),   // 13: stale (the consumer's deletion kept the signer's version 1)
		contactEv(k2, 6, "Kate"), // 14: an upsert
	)
	if st != (batchStats{applied: 5, skipped: 3}) {
		t.Fatalf("stats = %+v", st)
	}
	// An invalid event (dead-lettered) is never recorded, whatever it held.
	if _, err := s.applyBatch([]item{{seq: 15, valid: false, ev: contactDelEv(k2, 9)}}); err != nil {
		t.Fatal(err)
	}
	want := []Deletion{
		{Seq: 7, Time: itemTime(6, 7), Entity: events.Entity{Kind: events.KindConsumer, ID: c1, ConsumerID: c1}},
		{Seq: 9, Time: itemTime(6, 9), Entity: events.Entity{Kind: events.KindSigner, ID: s2, ConsumerID: c2}},
		{Seq: 10, Time: itemTime(6, 10), Entity: events.Entity{Kind: events.KindBusinessContact, ID: k1}},
	}
	check := func(t *testing.T, s *Store) {
		t.Helper()
		if got := allDeletions(t, s, 0); !reflect.DeepEqual(got, want) {
			t.Errorf("Deletions(0):\n got  %+v\n want %+v", got, want)
		}
		if got := allDeletions(t, s, 7); !reflect.DeepEqual(got, want[1:]) {
			t.Errorf("Deletions(7):\n got  %+v\n want %+v", got, want[1:])
		}
		if got := allDeletions(t, s, 10); len(got) != 0 {
			t.Errorf("Deletions(10) = %+v, want none", got)
		}
		if last, err := s.LastDeletion(); err != nil || last != 10 {
			t.Errorf("LastDeletion = %d, %v; want 10", last, err)
		}
	}
	check(t, s)

	t.Run("fn's error and ctx stop the scan", func(t *testing.T) {
		stop := errors.New("stop")
		n := 0
		err := s.Deletions(t.Context(), 0, func(Deletion) error { n++; return stop })
		if !errors.Is(err, stop) || n != 1 {
			t.Errorf("Deletions with a failing fn: %v after %d calls, want stop after 1", err, n)
		}
		ctx, cancel := context.WithCancel(t.Context())
		n = 0
		err = s.Deletions(ctx, 0, func(Deletion) error { n++; cancel(); return nil })
		if !errors.Is(err, context.Canceled) || n != 1 {
			t.Errorf("Deletions with ctx cancelled: %v after %d calls, want context.Canceled after 1", err, n)
		}
	})
	outer := t
	t.Run("after a restart", func(t *testing.T) {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openStore(outer, dir, StoreOptions{}) // open for the next subtest
		check(t, s)
	})
	t.Run("through a snapshot", func(t *testing.T) {
		snap, err := s.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		var buf bytes.Buffer
		if _, err := snap.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		restored := emptyStore(t, nil)
		if _, err := restored.RestoreSnapshot(&buf, nil); err != nil {
			t.Fatal(err)
		}
		check(t, restored)
	})
}

// TestDeletionsPaged: a scan over more records than one read transaction
// reads gives each once, in stream order.
func TestDeletionsPaged(t *testing.T) {
	s := emptyStore(t, nil)
	const n = 2*deletionsPage + 3
	var evs []events.Event
	for range n {
		evs = append(evs, contactDelEv(newID(), 1))
	}
	applyAll(t, s, evs...)
	got := allDeletions(t, s, 0)
	if len(got) != n {
		t.Fatalf("%d deletions, want %d", len(got), n)
	}
	for i, d := range got {
		if d.Seq != uint64(i+1) || d.Entity.ID != evs[i].Entity().ID { //nolint:gosec // G115: a small index
			t.Fatalf("deletion %d: %+v, want seq %d of %s", i, d, i+1, evs[i].Entity().ID)
		}
	}
}

// TestSplitConsumerDeletionRecordedOnce: a consumer deletion too big for
// one transaction tombstones its signers in chunks first, then is recorded
// once, in the transaction of its checkpoint: when that transaction fails
// there is no record (and the checkpoint has not moved), and the retry
// records it once.
func TestSplitConsumerDeletionRecordedOnce(t *testing.T) {
	s := openStore(t, t.TempDir(), StoreOptions{memTableSize: 1 << 20})
	cid := newID()
	evs := []events.Event{consumerEv(cid, 1, "Ann")}
	for i := range 4000 {
		evs = append(evs, signerEv(cid, fmt.Sprintf("00000000-0000-4000-8000-%012d", i), 1, "S"))
	}
	applyAll(t, s, evs...) // 1-4001
	del := []item{{seq: 4002, time: time.Unix(1700000001, 0).UTC(), valid: true, ev: consumerDelEv(cid, 2)}}

	// The first transaction is too big; the chunks are written; the
	// deletion's own transaction fails.
	calls := 0
	s.hooks.applyFault = func() error {
		if calls++; calls == 2 {
			return errors.New("disk on fire")
		}
		return nil
	}
	if _, err := s.applyBatch(del); err == nil {
		t.Fatal("applyBatch succeeded despite the failing transaction")
	}
	if got := countLiveSigners(t, s, cid); got != 0 {
		t.Fatalf("%d live signers after the chunks, want 0 (the split did not happen)", got)
	}
	if got := allDeletions(t, s, 0); len(got) != 0 {
		t.Errorf("deletion recorded without its checkpoint: %+v", got)
	}
	if cp, _ := s.Checkpoint(); cp != 4001 {
		t.Errorf("checkpoint %d, want 4001", cp)
	}
	s.hooks.applyFault = nil
	if _, err := s.applyBatch(del); err != nil {
		t.Fatal(err)
	}
	want := []Deletion{{Seq: 4002, Time: del[0].time, Entity: events.Entity{Kind: events.KindConsumer, ID: cid, ConsumerID: cid}}}
	if got := allDeletions(t, s, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("Deletions:\n got  %+v\n want %+v", got, want)
	}
}

// TestDeletionStreamTime: through the projector, a deletion's record
// holds the stream time of its message.
func TestDeletionStreamTime(t *testing.T) {
	js := setup(t)
	cid := newID()
	publishAll(t, js, []wireMsg{encodeMsg(t, consumerEv(cid, 1, "Ann")), encodeMsg(t, consumerDelEv(cid, 2))})
	s := emptyStore(t, nil)
	p := New(js, s, Config{})
	stop := runProjector(t, p)
	waitApplied(t, p, 2, 30*time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	m, err := mustStream(t, js).GetMsg(t.Context(), 2)
	if err != nil {
		t.Fatal(err)
	}
	got := allDeletions(t, s, 0)
	if len(got) != 1 || got[0].Seq != 2 || !got[0].Time.Equal(m.Time) || got[0].Entity.ID != cid {
		t.Errorf("Deletions = %+v, want seq 2 at %s of consumer %s", got, m.Time, cid)
	}
}
