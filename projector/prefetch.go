package projector

import (
	"runtime"
	"sync"

	"github.com/dgraph-io/badger/v4"
	"github.com/lookup/persons/events"
)

// prefetchMin is the smallest batch whose reads are spread over several
// goroutines; a smaller one reads as it applies.
const prefetchMin = 64

// batchReads is what applying one transaction's events reads of the store
// as it was before them: the versions that the version cache does not hold
// and the signer sets of the consumers whose signers change. prefetch reads
// them on several goroutines at once before the serial apply, where each
// would otherwise be a lookup on the writer's one goroutine (a lookup of an
// absent key searches every level of the store). The writer is alone, and
// every earlier transaction has committed, so the store does not change
// under the reads; what the batch itself writes is read from the version
// cache's pending entries and from sets, which supersede what was read.
type batchReads struct {
	versions []uint64 // by item: the version of its entity, valid where hasVersion
	has      []bool
	setOf    []*signerSet // by item: its consumer's set before the batch (nil: none, or not read)
	setRead  []bool
	// sets are the signer sets as this transaction has left them so far,
	// by consumer id: read (from setOf or the store) at the first change.
	sets map[string]*setState
}

// setState is a consumer's signer set as the transaction has left it, and
// whether its key holds it (false: absent, or deleted by the transaction).
type setState struct {
	set    signerSet
	stored bool
}

// current returns the signer set of consumerID as the transaction has
// left it so far, for item i: from sets, else what prefetch read, else
// read now through txn.
func (b *batchReads) current(txn *badger.Txn, vc *versionCache, i int, consumerID string) (*setState, error) {
	if st, ok := b.sets[consumerID]; ok {
		return st, nil
	}
	st := &setState{}
	switch key := entityKey(tagSignerSet, consumerID); {
	case b.setRead != nil && b.setRead[i]:
		if pre := b.setOf[i]; pre != nil {
			st.set, st.stored = *pre, true
		}
	case vc.mayExist(key):
		set, exists, err := readSignerSet(txn, key)
		if err != nil {
			return nil, err
		}
		st.set, st.stored = set, exists
	}
	b.sets[consumerID] = st
	return st, nil
}

// prefetch reads, for each of items, its entity's version when vc does not
// know it and it may exist, and for a signer event its consumer's signer
// set when it may exist, on up to GOMAXPROCS goroutines. Reads that fail
// are left undone: the apply reads them again, and reports the error.
func (s *Store) prefetch(items []item, vc *versionCache) *batchReads {
	b := &batchReads{sets: map[string]*setState{}}
	if len(items) < prefetchMin {
		return b
	}
	n := len(items)
	b.versions, b.has, b.setOf, b.setRead = make([]uint64, n), make([]bool, n), make([]*signerSet, n), make([]bool, n)
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
	if ent := it.ev.Entity(); ent.Kind == events.KindSigner {
		setKey := entityKey(tagSignerSet, ent.ConsumerID)
		if !vc.mayExist(setKey) {
			b.setRead[i] = true
			return
		}
		if set, exists, err := readSignerSet(txn, setKey); err == nil {
			b.setRead[i] = true
			if exists {
				b.setOf[i] = &set
			}
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
