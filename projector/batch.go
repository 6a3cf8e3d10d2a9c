package projector

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/lookup/persons/events"
)

// batch is one write transaction of the projector (Store.writeTxn): the
// transaction, what the writer knows of the store while it applies the
// batch's items into it, and what they did. Every effect of the items,
// and the checkpoint after the last of them (setCheckpoint), is written
// through txn and lands with its commit or not at all, so the store is
// always the projection of a prefix of the stream.
//
// Three optimisations sit behind it, each with the benchmark that
// justifies it:
//
//   - vc, the version cache (versioncache.go): the version check of an
//     entity seen recently needs no Badger lookup (BenchmarkApply, its
//     cpu-ns/event: about 1.2 µs of CPU an event less); in a store found
//     empty, its filter of written keys spares the lookup of an entity
//     never written (a rebuild into a fresh store, as BenchmarkProjection
//     projects).
//   - reads, the prefetched reads (prefetch.go): what the items read of
//     the store as it was before them, read on several goroutines before
//     the serial apply (BenchmarkProjection, its ratio to a drain: at 1M
//     events 0.26-0.33x before, 0.30-0.46x after, docs/performance.md).
//   - sets and consumers, the signer sets as the batch leaves them
//     (signerset.go): each consumer's set is kept in the same transaction
//     as its signer records, so that GET signers reads one point lookup,
//     not a prefix scan (BenchmarkSigners, the read it serves; its cost
//     to the writer is in BenchmarkApply and BenchmarkProjection).
type batch struct {
	txn   *badger.Txn
	vc    *versionCache
	reads *batchReads
	// sets are the signer sets as this transaction has left them so far,
	// by consumer id: read (from reads or the store) at the first change.
	sets map[string]*setState
	// consumers are the consumer records this transaction has written so
	// far, by id: their fields, nil for a deletion.
	consumers map[string][]byte
	// deferSets: the store's signer sets wait for finishSets (see
	// Store.setsDeferred); the batch neither reads nor writes them.
	deferSets bool
	st        batchStats // what the applied items did
}

// newBatch opens the write transaction of items, starts the version
// cache's pending entries and prefetches what the items read.
func (s *Store) newBatch(items []item) *batch {
	txn := s.db.NewTransaction(true)
	s.versions.begin()
	deferSets := s.setsDeferred.Load()
	return &batch{
		txn:       txn,
		vc:        &s.versions,
		reads:     s.prefetch(items, &s.versions, deferSets),
		sets:      map[string]*setState{},
		consumers: map[string][]byte{},
		deferSets: deferSets,
	}
}

// discard drops the transaction; after commit it does nothing.
func (b *batch) discard() { b.txn.Discard() }

// setCheckpoint writes the checkpoint after last, the item the batch ends
// with, the signer sets' marker at it (unless they are deferred: a marker
// behind the checkpoint makes them again at open) and, when non-nil, the
// stream's identity ident.
func (b *batch) setCheckpoint(last item, ident []byte) error {
	err := b.txn.Set(keyCheckpoint, encodeCheckpoint(last.seq, last.time))
	if err == nil && !b.deferSets {
		err = b.txn.Set(keySignerSets, setsMarkerValue(last.seq))
	}
	if err == nil && ident != nil {
		err = b.txn.Set(keyStream, ident)
	}
	return err
}

// commit commits the transaction and, once it has, the versions it
// wrote to the version cache.
func (b *batch) commit() error {
	if err := b.txn.Commit(); err != nil {
		return err
	}
	b.vc.commit()
	return nil
}

// apply applies one event, item i of the batch, under the rules of
// docs/events.md.
func (b *batch) apply(i int, it *item) error {
	if !it.valid {
		b.st.deadLettered++
		return nil
	}
	ev := &it.ev
	ent := ev.Entity()
	key, known := entityKeyOf(ev)
	if !known {
		return fmt.Errorf("event %s: unknown data %T", ev.Type, ev.Data)
	}
	seen, err := b.version(i, key)
	if err != nil {
		return err
	}
	if ev.EntityVersion <= seen {
		b.st.skipped++
		return nil
	}
	var val []byte
	switch d := ev.Data.(type) {
	case events.Consumer:
		val = encodePerson(ev.EntityVersion, d.BusinessID, d.FirstName, d.MiddleName, d.LastName)
	case events.BusinessContact:
		val = encodePerson(ev.EntityVersion, d.BusinessID, d.FirstName, d.MiddleName, d.LastName)
	case events.Signer:
		val = encodeSigner(ev.EntityVersion, &d)
	case events.ConsumerDeleted:
		if _, err := purgeSigners(b.txn, d.ConsumerID, 0); err != nil {
			return err
		}
		if err := b.dropSignerSet(d.ConsumerID); err != nil {
			return err
		}
	}
	if val == nil { // a deletion, applied: a tombstone, and its record (deletions.go)
		val = appendHeader(nil, ev.EntityVersion, true)
		if err := b.recordDeletion(it, ent); err != nil {
			return err
		}
	}
	b.vc.wrote(key) // before the write: the filter must hold every key that may be in the store
	if err := b.txn.Set(key, val); err != nil {
		return err
	}
	switch {
	case b.deferSets:
	case ent.Kind == events.KindSigner:
		if err := b.keepSignerSet(i, ent.ConsumerID, ent.ID, val); err != nil {
			return err
		}
	case ent.Kind == events.KindConsumer: // a deletion has dropped the set
		if err := b.keepSetConsumer(i, ent.ID, val); err != nil {
			return err
		}
	}
	b.vc.put(key, ev.EntityVersion)
	b.st.applied++
	return nil
}

// version returns the version of the entity at key, item i's, as the
// transaction has left it so far (0: none): from the version cache, else
// what prefetch read, else read now when the key may exist. What it
// learns goes into the cache's pending entries.
func (b *batch) version(i int, key []byte) (uint64, error) {
	seen, ok := b.vc.get(key)
	if ok {
		return seen, nil
	}
	seen, ok = b.reads.version(i)
	if !ok && b.vc.mayExist(key) {
		var err error
		if seen, err = versionAt(b.txn, key); err != nil {
			return 0, err
		}
		ok = true
	}
	if ok {
		b.vc.put(key, seen)
	}
	return seen, nil
}
