package projector

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/events"
)

// checkSignerSets fails t unless every consumer's signer set holds exactly
// the live signers of its signer records (or says it overflowed) and the
// fields of its consumer's live record (none when it is absent or
// deleted), there is no set without live signers, Signers returns what
// the records hold, and the marker holds the checkpoint.
func checkSignerSets(t testing.TB, s *Store) {
	t.Helper()
	fromRecords := map[string][]setEntry{}
	sets := map[string]signerSet{}
	consumers := map[string][]byte{} // live consumers' fields
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k, v := it.Item().Key(), []byte(nil)
			if k[0] != tagSigner && k[0] != tagSignerSet && k[0] != tagConsumer {
				continue
			}
			v, err := it.Item().ValueCopy(v)
			if err != nil {
				return err
			}
			if k[0] == tagConsumer {
				if h, rest, err := decodeHeader(v); err != nil {
					return err
				} else if !h.deleted {
					consumers[string(k[1:])] = rest
				}
				continue
			}
			if k[0] == tagSignerSet {
				if sets[string(k[1:])], err = decodeSignerSet(v); err != nil {
					return fmt.Errorf("set %q: %w", k, err)
				}
				continue
			}
			cid, sid, _ := bytes.Cut(k[1:], []byte{'.'})
			h, rest, err := decodeHeader(v)
			if err != nil {
				return err
			}
			if !h.deleted {
				fromRecords[string(cid)] = append(fromRecords[string(cid)], setEntry{id: string(sid), fields: rest})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for cid, want := range fromRecords {
		got, ok := sets[cid]
		switch {
		case !ok:
			t.Errorf("consumer %s: %d live signers and no signer set", cid, len(want))
		case got.overflow:
			if len(want) <= maxSetSigners/2 {
				t.Logf("consumer %s: signer set overflowed, %d live signers now", cid, len(want))
			}
		case !reflect.DeepEqual(got.entries, want):
			t.Errorf("consumer %s: signer set\n got  %v\n want %v", cid, ids(got.entries), ids(want))
		case !got.consumerKnown:
			t.Errorf("consumer %s: signer set without the consumer's record", cid)
		case !bytes.Equal(got.consumer, consumers[cid]) || (got.consumer == nil) != (consumers[cid] == nil):
			t.Errorf("consumer %s: signer set holds consumer %q, its record %q", cid, got.consumer, consumers[cid])
		}
		checkSignersRead(t, s, cid, consumers[cid], len(want))
	}
	for cid, set := range sets {
		if _, ok := fromRecords[cid]; !ok && !set.overflow {
			t.Errorf("consumer %s: a signer set of %d and no live signer", cid, len(set.entries))
		}
	}
	seq, err := s.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	var marker []byte
	if err := s.db.View(func(txn *badger.Txn) error {
		return viewValue(txn, keySignerSets, func(v []byte) error { marker = bytes.Clone(v); return nil })
	}); err != nil {
		t.Fatal(err)
	}
	if seq != 0 && !bytes.Equal(marker, setsMarkerValue(seq)) {
		t.Errorf("signer sets marker %x, want the checkpoint %d", marker, seq)
	}
}

// checkSignersRead fails t unless Signers of consumer cid returns the
// consumer of the record fields live (nil: ErrNotFound) and n signers.
func checkSignersRead(t testing.TB, s *Store, cid string, live []byte, n int) {
	t.Helper()
	p, got, err := s.Signers(t.Context(), cid)
	if live == nil {
		if !errors.Is(err, events.ErrNotFound) {
			t.Errorf("Signers(%s) of a consumer without a live record: err %v, want ErrNotFound", cid, err)
		}
		return
	}
	want, err2 := decodePerson(live)
	want.ID, want.Type = cid, events.PersonTypeConsumer
	switch {
	case err != nil || err2 != nil:
		t.Errorf("Signers(%s): %v (record: %v)", cid, err, err2)
	case p != want:
		t.Errorf("Signers(%s) consumer %+v, its record %+v", cid, p, want)
	case len(got) != n:
		t.Errorf("Signers(%s): %d signers, the records %d", cid, len(got), n)
	}
}

func ids(es []setEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.id
	}
	return out
}

func TestSignerSetPut(t *testing.T) {
	f := func(s string) []byte { return []byte(s) }
	tests := []struct {
		name         string
		puts         [][2]string // id, fields ("" removes)
		wantIDs      []string
		wantOverflow bool
	}{
		{name: "kept in id order", puts: [][2]string{{"c", "3"}, {"a", "1"}, {"b", "2"}}, wantIDs: []string{"a", "b", "c"}},
		{name: "replaced in place", puts: [][2]string{{"a", "1"}, {"b", "2"}, {"a", "9"}}, wantIDs: []string{"a", "b"}},
		{name: "removed", puts: [][2]string{{"a", "1"}, {"b", "2"}, {"a", ""}}, wantIDs: []string{"b"}},
		{name: "removing an absent one is nothing", puts: [][2]string{{"a", "1"}, {"z", ""}}, wantIDs: []string{"a"}},
		{name: "too many signers", puts: manyPuts(maxSetSigners+1, 10), wantOverflow: true},
		{name: "just enough signers", puts: manyPuts(maxSetSigners, 10), wantIDs: idsOf(maxSetSigners)},
		{name: "too many bytes", puts: manyPuts(3, maxSetBytes/2), wantOverflow: true},
		{name: "overflow sticks", puts: append(manyPuts(maxSetSigners+1, 10), [2]string{"a", ""}), wantOverflow: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s signerSet
			for _, p := range tc.puts {
				var fields []byte
				if p[1] != "" {
					fields = f(p[1])
				}
				s.put(p[0], fields)
			}
			if s.overflow != tc.wantOverflow {
				t.Fatalf("overflow %v, want %v", s.overflow, tc.wantOverflow)
			}
			if got := ids(s.entries); !tc.wantOverflow && !reflect.DeepEqual(got, tc.wantIDs) {
				t.Errorf("ids %v, want %v", got, tc.wantIDs)
			}
			back, err := decodeSignerSet(s.encode())
			if err != nil {
				t.Fatalf("decode what encode wrote: %v", err)
			}
			if back.overflow != s.overflow || !reflect.DeepEqual(ids(back.entries), ids(s.entries)) {
				t.Errorf("round trip: got %+v, want %+v", back, s)
			}
			for i := range back.entries {
				if !bytes.Equal(back.entries[i].fields, s.entries[i].fields) {
					t.Errorf("entry %d fields %q, want %q", i, back.entries[i].fields, s.entries[i].fields)
				}
			}
		})
	}
}

func idsOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("s%03d", i)
	}
	return out
}

func manyPuts(n, size int) [][2]string {
	var out [][2]string
	for _, id := range idsOf(n) {
		out = append(out, [2]string{id, strings.Repeat("x", size)})
	}
	return out
}

func TestDecodeSignerSetCorrupt(t *testing.T) {
	good := (&signerSet{entries: []setEntry{{id: "a", fields: []byte("xyz")}}}).encode()
	for name, v := range map[string][]byte{
		"empty":          nil,
		"wrong format":   append([]byte{9}, good[1:]...),
		"truncated":      good[:len(good)-1],
		"trailing bytes": append(bytes.Clone(good), 0),
		"count too big":  {formatV1, 0, maxSetSigners + 1},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := decodeSignerSet(v); err == nil {
				t.Errorf("decodeSignerSet(%x) = nil error, want errCorrupt", v)
			}
		})
	}
}

// TestSignersOverflowScans gives one consumer more signers than a set
// holds: GET signers reads them all, in order, by the scan, and deleting
// some and then the consumer leaves no set behind.
func TestSignersOverflowScans(t *testing.T) {
	js := setup(t)
	rng := rand.New(rand.NewPCG(5, 6))
	c := uuidFrom(rng)
	msgs := []wireMsg{encodeMsg(t, events.Event{ID: uuidFrom(rng), EntityVersion: 1,
		Data: events.Consumer{ConsumerID: c, BusinessID: testBiz, FirstName: "F", LastName: "L"}})}
	var signerIDs []string
	for range maxSetSigners + 6 {
		id := uuidFrom(rng)
		signerIDs = append(signerIDs, id)
		msgs = append(msgs, encodeMsg(t, events.Event{ID: uuidFrom(rng), EntityVersion: 1, Data: fullSigner(c, id, "S")}))
	}
	for _, id := range signerIDs[:10] {
		msgs = append(msgs, encodeMsg(t, events.Event{ID: uuidFrom(rng), EntityVersion: 2, Data: events.SignerDeleted{ConsumerID: c, SignerID: id}}))
	}
	publishAll(t, js, msgs)
	s := projected(t, js, nil)
	_, got, err := s.Signers(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(signerIDs) - 10; len(got) != want {
		t.Fatalf("%d signers, want %d", len(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i-1].SignerID >= got[i].SignerID {
			t.Fatalf("signers out of order at %d: %s then %s", i, got[i-1].SignerID, got[i].SignerID)
		}
	}
	compareState(t, dump(t, s), refOf(t, msgs))
}

// refOf is the reference state of msgs.
func refOf(t testing.TB, msgs []wireMsg) map[string]refState {
	t.Helper()
	st, _, _, _ := reference(msgs)
	return st
}

// TestSignerSetsMadeAtOpen removes the signer sets and their marker, as a
// store written by a build without them is, or moves the marker off the
// checkpoint, as an older build writing to the store does: the next Open
// makes them again, and every consumer's signers read the same.
func TestSignerSetsMadeAtOpen(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(txn *badger.Txn) error
	}{
		{name: "no sets, no marker", corrupt: func(txn *badger.Txn) error { return txn.Delete(keySignerSets) }},
		{name: "marker behind the checkpoint", corrupt: func(txn *badger.Txn) error { return txn.Set(keySignerSets, setsMarkerValue(1)) }},
		{name: "sets of the first layout", corrupt: firstLayout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := setup(t)
			msgs := genStream(t, rand.New(rand.NewPCG(7, 8)), 3000)
			publishAll(t, js, msgs)
			dir := filepath.Join(t.TempDir(), "store")
			s := openStore(t, dir, StoreOptions{})
			projectAll(t, js, s, streamLastSeq(t, js))
			want := allSigners(t, s, msgs)
			if tc.name == "no sets, no marker" {
				if err := s.db.DropPrefix([]byte{tagSignerSet}); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.db.Update(tc.corrupt); err != nil {
				t.Fatal(err)
			}
			if got := allSigners(t, s, msgs); tc.name == "sets of the first layout" && !reflect.DeepEqual(got, want) {
				t.Errorf("signers read through sets of the first layout differ from before")
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, dir, StoreOptions{})
			if got := allSigners(t, s, msgs); !reflect.DeepEqual(got, want) {
				t.Errorf("signers after the sets were made again differ from before")
			}
			compareState(t, dump(t, s), refOf(t, msgs))
		})
	}
}

// firstLayout rewrites every signer set and the marker as the first
// layout had them: no copy of the consumer, the marker the checkpoint's
// sequence alone.
func firstLayout(txn *badger.Txn) error {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{tagSignerSet}})
	var keys, vals [][]byte
	for it.Seek([]byte{tagSignerSet}); it.ValidForPrefix([]byte{tagSignerSet}); it.Next() {
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			it.Close()
			return err
		}
		set, err := decodeSignerSet(v)
		if err != nil {
			it.Close()
			return err
		}
		set.consumerKnown, set.consumer = false, nil
		keys, vals = append(keys, it.Item().KeyCopy(nil)), append(vals, set.encode())
	}
	it.Close()
	for i := range keys {
		if err := txn.Set(keys[i], vals[i]); err != nil {
			return err
		}
	}
	var seq []byte
	if err := viewValue(txn, keyCheckpoint, func(v []byte) error { seq = bytes.Clone(v[:8]); return nil }); err != nil {
		return err
	}
	return txn.Set(keySignerSets, seq)
}

// allSigners reads the signers of every consumer of msgs, by consumer id.
func allSigners(t testing.TB, s *Store, msgs []wireMsg) map[string][]events.Signer {
	t.Helper()
	out := map[string][]events.Signer{}
	for _, m := range msgs {
		if !m.valid {
			continue
		}
		c := m.ev.Entity().ConsumerID
		if c == "" {
			continue
		}
		_, sg, err := s.Signers(t.Context(), c)
		if err != nil && !errors.Is(err, events.ErrNotFound) {
			t.Fatal(err)
		}
		out[c] = sg
	}
	return out
}

// TestSignerSetConsumerInOneTransaction applies, in one transaction, the
// sequences of consumer and signer events that empty, drop and make a set
// again, and checks the consumer that Signers returns against the
// records after each.
func TestSignerSetConsumerInOneTransaction(t *testing.T) {
	const c, s1, s2 = "0c0c0c0c-0000-4000-8000-000000000001", "5a5a5a5a-0000-4000-8000-000000000001", "5a5a5a5a-0000-4000-8000-000000000002"
	consumer := func(v uint64, first string) events.Event {
		return events.Event{EntityVersion: v, Data: events.Consumer{ConsumerID: c, BusinessID: testBiz, FirstName: first, LastName: "L"}}
	}
	signer := func(v uint64, sid string) events.Event {
		return events.Event{EntityVersion: v, Data: fullSigner(c, sid, "S")}
	}
	signerGone := func(v uint64, sid string) events.Event {
		return events.Event{EntityVersion: v, Data: events.SignerDeleted{ConsumerID: c, SignerID: sid}}
	}
	consumerGone := func(v uint64) events.Event {
		return events.Event{EntityVersion: v, Data: events.ConsumerDeleted{ConsumerID: c}}
	}
	tests := []struct {
		name    string
		batches [][]events.Event
		first   string // the consumer's first name Signers returns; "": not found
	}{
		{name: "signer before its consumer", batches: [][]events.Event{{signer(1, s1)}}},
		{name: "consumer after its signer, next transaction", batches: [][]events.Event{{signer(1, s1)}, {consumer(1, "A")}}, first: "A"},
		{name: "consumer after its signer, same transaction", batches: [][]events.Event{{signer(1, s1), consumer(1, "A")}}, first: "A"},
		{name: "consumer then signer, same transaction", batches: [][]events.Event{{consumer(1, "A"), signer(1, s1)}}, first: "A"},
		{name: "set emptied, consumer made, set made again", batches: [][]events.Event{{signer(1, s1)}, {signerGone(2, s1), consumer(1, "A"), signer(1, s2)}}, first: "A"},
		{name: "set emptied, consumer renamed, set made again", batches: [][]events.Event{{consumer(1, "A"), signer(1, s1)}, {signerGone(2, s1), consumer(2, "B"), signer(1, s2)}}, first: "B"},
		{name: "consumer deleted, then a signer", batches: [][]events.Event{{consumer(1, "A"), signer(1, s1)}, {consumerGone(2), signer(1, s2)}}},
		{name: "consumer deleted, signer, consumer again", batches: [][]events.Event{{consumer(1, "A"), signer(1, s1)}, {consumerGone(2), signer(1, s2), consumer(3, "C")}}, first: "C"},
		{name: "consumer renamed", batches: [][]events.Event{{consumer(1, "A"), signer(1, s1)}, {consumer(2, "B")}}, first: "B"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, t.TempDir(), StoreOptions{})
			seq := uint64(0)
			for _, evs := range tc.batches {
				var batch []item
				for _, ev := range evs {
					seq++
					batch = append(batch, item{valid: true, ev: ev, seq: seq})
				}
				if _, err := s.applyBatch(batch); err != nil {
					t.Fatal(err)
				}
			}
			p, _, err := s.Signers(t.Context(), c)
			switch {
			case tc.first == "" && !errors.Is(err, events.ErrNotFound):
				t.Errorf("Signers: consumer %+v, err %v; want ErrNotFound", p, err)
			case tc.first != "" && (err != nil || p.FirstName != tc.first):
				t.Errorf("Signers: consumer %q, err %v; want %q", p.FirstName, err, tc.first)
			}
			checkSignerSets(t, s)
		})
	}
}
