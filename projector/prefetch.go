package projector

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/lookup/persons/events"
)

// prefetchMin is the smallest batch whose reads are spread over several
// goroutines; a smaller one reads as it applies.
const prefetchMin = 64

// batchReads is what applying one transaction's events reads of the store
// as it was before them: the versions that the version cache does not hold,
// the signer sets of the consumers whose signers or records change, and
// the records of the consumers whose first signer comes. prefetch reads
// them on several goroutines at once before the serial apply, where each
// would otherwise be a lookup on the writer's one goroutine (a lookup of an
// absent key searches every level of the store): BenchmarkProjection
// measures it. The writer is alone, and every earlier transaction has
// committed, so the store does not change under the reads; what the batch
// itself writes is read from the version cache's pending entries and from
// the batch's sets and consumers, which supersede what was read.
type batchReads struct {
	versions []uint64 // by item: the version of its entity, valid where has
	has      []bool
	setOf    []*signerSet // by item: its consumer's set before the batch (nil: none, or not read)
	setRead  []bool
	// consumerOf, by item: the fields of its consumer's record before the
	// batch (nil: none live), valid where consumerRead.
	consumerOf   [][]byte
	consumerRead []bool
	deferSets    bool // the batch keeps no sets: read none
}

// liveFields returns a copy of the fields of the live record at key, nil
// when it is absent (vc says it cannot be there, or it is not) or a
// tombstone.
func liveFields(txn *badger.Txn, vc *versionCache, key []byte) ([]byte, error) {
	if !vc.mayExist(key) {
		return nil, nil
	}
	var fields []byte
	if err := viewValue(txn, key, keepLive(&fields)); err != nil {
		return nil, fmt.Errorf("read %q: %w", key, err)
	}
	return fields, nil
}

// keepLive returns a reader of a record's value that copies its fields to
// *fields when the record is live, not a tombstone.
func keepLive(fields *[]byte) func(v []byte) error {
	return func(v []byte) error {
		h, rest, err := decodeHeader(v)
		if err == nil && !h.deleted {
			*fields = bytes.Clone(rest)
		}
		return err
	}
}

// prefetch reads, for each of items, its entity's version when vc does not
// know it and it may exist, for a signer or consumer event its consumer's
// signer set when it may exist, and for a signer event whose consumer's
// set is to be made the consumer's record, on up to GOMAXPROCS goroutines. Reads that fail
// are left undone: the apply reads them again, and reports the error.
func (s *Store) prefetch(items []item, vc *versionCache, deferSets bool) *batchReads {
	b := &batchReads{deferSets: deferSets}
	if len(items) < prefetchMin {
		return b
	}
	n := len(items)
	b.versions, b.has, b.setOf, b.setRead = make([]uint64, n), make([]bool, n), make([]*signerSet, n), make([]bool, n)
	b.consumerOf, b.consumerRead = make([][]byte, n), make([]bool, n)
	workers := min(runtime.GOMAXPROCS(0), 4)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			_ = s.db.View(func(txn *badger.Txn) error {
				for i := w; i < n; i += workers {
					b.read(txn, vc, i, &items[i])
				}
				return nil
			})
		})
	}
	wg.Wait()
	return b
}

// read reads what item i needs (see prefetch). vc is only read: its
// pending entries are empty and its committed ones fixed until the apply.
func (b *batchReads) read(txn *badger.Txn, vc *versionCache, i int, it *item) {
	if !it.valid {
		return
	}
	key, ok := entityKeyOf(&it.ev)
	if !ok {
		return
	}
	before, known := vc.get(key)
	if !known && vc.mayExist(key) {
		if v, err := versionAt(txn, key); err == nil {
			before, known = v, true
			b.versions[i], b.has[i] = v, true
		}
	}
	if known && it.ev.EntityVersion <= before {
		return // stale: skipped whatever the batch does before it (versions only grow)
	}
	ent := it.ev.Entity()
	if _, drop := it.ev.Data.(events.ConsumerDeleted); drop || b.deferSets || (ent.Kind != events.KindSigner && ent.Kind != events.KindConsumer) {
		return // a deletion drops the set unread
	}
	set, exists := signerSet{}, false
	if setKey := entityKey(tagSignerSet, ent.ConsumerID); vc.mayExist(setKey) {
		var err error
		if set, exists, err = readSignerSet(txn, setKey); err != nil {
			return
		}
	}
	b.setRead[i] = true
	if exists {
		b.setOf[i] = &set
	}
	if ent.Kind == events.KindSigner && (!exists || (!set.overflow && !set.consumerKnown)) {
		// The set is made, or made again, with the consumer as it is.
		if c, err := liveFields(txn, vc, entityKey(tagConsumer, ent.ConsumerID)); err == nil {
			b.consumerOf[i], b.consumerRead[i] = c, true
		}
	}
}

// version returns the version read for item i, ok false if none was.
func (b *batchReads) version(i int) (uint64, bool) {
	if b.has == nil || !b.has[i] {
		return 0, false
	}
	return b.versions[i], true
}

// set returns the signer set of item i's consumer as read (nil: none),
// ok false if it was not read.
func (b *batchReads) set(i int) (set *signerSet, ok bool) {
	if b.setRead == nil || !b.setRead[i] {
		return nil, false
	}
	return b.setOf[i], true
}

// consumer returns the fields of item i's consumer's record as read (nil:
// none live), ok false if it was not read.
func (b *batchReads) consumer(i int) (fields []byte, ok bool) {
	if b.consumerRead == nil || !b.consumerRead[i] {
		return nil, false
	}
	return b.consumerOf[i], true
}

// entityKeyOf returns the key of the entity ev is about.
func entityKeyOf(ev *events.Event) ([]byte, bool) {
	ent := ev.Entity()
	switch ent.Kind {
	case events.KindConsumer:
		return entityKey(tagConsumer, ent.ID), true
	case events.KindBusinessContact:
		return entityKey(tagContact, ent.ID), true
	case events.KindSigner:
		return signerKey(ent.ConsumerID, ent.ID), true
	}
	return nil, false
}
