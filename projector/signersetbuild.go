package projector

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// setsLayout is the layout of the signer sets this build writes: 2, sets
// that hold their consumer's record too. A marker of another layout (the
// first had none) makes the sets again at open.
const setsLayout = 2

// setsMarkerValue is the value of keySignerSets for a checkpoint at seq:
// the signer sets are those of the records at that checkpoint, in
// setsLayout.
func setsMarkerValue(seq uint64) []byte {
	return append(binary.BigEndian.AppendUint64(nil, seq), setsLayout)
}

// ensureSignerSets makes the signer sets again from the signer records when
// the store has a checkpoint and the marker keySignerSets does not hold its
// sequence and this build's layout (see signerset.go). It must run with no writer at work: Open
// and RestoreSnapshot call it. A crash part way leaves the marker stale,
// and the next call starts over.
func (s *Store) ensureSignerSets() error {
	var (
		seq          uint64
		checkpointed bool
		current      bool
	)
	err := s.db.View(func(txn *badger.Txn) error {
		err := viewValue(txn, keyCheckpoint, func(v []byte) (err error) {
			seq, _, err = decodeCheckpoint(v)
			checkpointed = err == nil
			return err
		})
		if err != nil || !checkpointed {
			return err
		}
		return viewValue(txn, keySignerSets, func(v []byte) error {
			current = bytes.Equal(v, setsMarkerValue(seq))
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("check the signer sets of %s: %w", s.dir, err)
	}
	if !checkpointed || current {
		return nil
	}
	s.logger.Info("making the signer sets of the read model from its signer records (once after an upgrade)", "position", seq)
	n, err := s.buildSignerSets(context.Background(), seq)
	if err != nil {
		return fmt.Errorf("make the signer sets of %s: %w", s.dir, err)
	}
	s.logger.Info("signer sets made", "consumers", n, "position", seq)
	return nil
}

// deferSetsIfEmpty has the writer keep no signer sets until finishSets
// when the store holds no entity yet: the Projector's choice for a
// rebuild from zero, where each consumer's set would otherwise be read,
// decoded and rewritten at each of its signers' events (BenchmarkProjection:
// 0.23x of a drain before, docs/performance.md). Meanwhile Signers reads the
// signer records, and a marker behind the checkpoint makes the sets at
// the next Open if the process stops first. Writer only.
func (s *Store) deferSetsIfEmpty() error {
	if !s.emptinessChecked {
		if err := s.checkEmpty(); err != nil {
			return err
		}
	}
	if s.foundEmpty {
		s.setsDeferred.Store(true)
	}
	return nil
}

// finishSets makes the signer sets that a writer of a store found empty
// deferred (Store.setsDeferred), at the checkpoint, and ends the
// deferral; without one it does nothing. The writer calls it once it has
// caught up, before the store is said to be (Projector.markCaughtUp):
// making each consumer's set once from its records, in key order, costs
// less than keeping it through every event of a rebuild
// (BenchmarkProjection measures both). It stops early when ctx is done,
// the sets still deferred.
func (s *Store) finishSets(ctx context.Context) error {
	if !s.setsDeferred.Load() {
		return nil
	}
	seq, _, err := s.checkpoint()
	if err != nil {
		return err
	}
	n, err := s.buildSignerSets(ctx, seq)
	if err != nil {
		return fmt.Errorf("make the signer sets of %s: %w", s.dir, err)
	}
	s.setsDeferred.Store(false)
	s.foundEmpty = false // made once: a later Run keeps them
	s.logger.Info("signer sets made after the rebuild", "consumers", n, "position", seq)
	return nil
}

// buildSignerSets drops every signer set, writes one for each consumer
// with live signers from the signer records and the consumer's record,
// then the marker for seq. It returns how many sets it wrote. When ctx is
// done it stops, the marker unwritten.
func (s *Store) buildSignerSets(ctx context.Context, seq uint64) (int, error) {
	// Deferred sets were never written, unless a build stopped part-way.
	if !s.setsDeferred.Load() || s.setsBuildStarted {
		if err := s.db.DropPrefix([]byte{tagSignerSet}); err != nil {
			return 0, err
		}
	}
	s.setsBuildStarted = true
	wb := s.db.NewWriteBatch()
	defer wb.Cancel()
	var (
		consumer []byte // the consumer id of set
		set      signerSet
		written  int
	)
	err := s.db.View(func(txn *badger.Txn) error {
		consumers := newConsumerScan(txn)
		defer consumers.close()
		flush := func() error {
			if consumer == nil || (!set.overflow && len(set.entries) == 0) {
				return nil
			}
			if !set.overflow {
				c, err := consumers.fields(txn, &s.versions, consumer)
				if err != nil {
					return err
				}
				set.consumer, set.consumerKnown = c, true
			}
			written++
			key := entityKey(tagSignerSet, string(consumer))
			s.versions.wrote(key)
			return wb.Set(key, set.encode())
		}
		prefix := []byte{tagSigner}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			cid, sid, ok := bytes.Cut(item.Key()[1:], []byte{'.'})
			if !ok {
				return fmt.Errorf("signer key %q: %w", item.Key(), errCorrupt)
			}
			if !bytes.Equal(cid, consumer) {
				if err := flush(); err != nil {
					return err
				}
				if written%4096 == 0 && ctx.Err() != nil {
					return ctx.Err()
				}
				consumer, set = bytes.Clone(cid), signerSet{}
			}
			err := item.Value(func(v []byte) error {
				h, rest, err := decodeHeader(v)
				if err == nil && !h.deleted {
					set.put(string(sid), bytes.Clone(rest))
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("read %q: %w", item.Key(), err)
			}
		}
		return flush()
	})
	if err == nil {
		err = wb.Flush()
	}
	if err != nil {
		return 0, err
	}
	// The marker last, once every set is written.
	return written, s.db.Update(func(txn *badger.Txn) error {
		return txn.Set(keySignerSets, setsMarkerValue(seq))
	})
}

// consumerScan reads the consumers' records in key order, beside the
// signer records' scan of buildSignerSets, which asks for them in the same
// order: one pass over the consumers instead of a point lookup each (a
// lookup searches every level of the store).
type consumerScan struct {
	it     *badger.Iterator
	prefix []byte
	last   []byte // the last consumer id asked for
}

func newConsumerScan(txn *badger.Txn) *consumerScan {
	prefix := []byte{tagConsumer}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	it.Seek(prefix)
	return &consumerScan{it: it, prefix: prefix}
}

func (c *consumerScan) close() { c.it.Close() }

// fields returns a copy of the fields of the live record of consumer id,
// nil when it has none or a tombstone. An id that comes before the last
// one asked for (not in key order) is looked up instead.
func (c *consumerScan) fields(txn *badger.Txn, vc *versionCache, id []byte) ([]byte, error) {
	key := entityKey(tagConsumer, string(id))
	if c.last != nil && bytes.Compare(id, c.last) < 0 {
		return liveFields(txn, vc, key)
	}
	c.last = append(c.last[:0], id...)
	for ; c.it.ValidForPrefix(c.prefix); c.it.Next() {
		switch k := c.it.Item().Key(); bytes.Compare(k, key) {
		case -1:
			continue
		case 1:
			return nil, nil
		}
		var fields []byte
		if err := c.it.Item().Value(keepLive(&fields)); err != nil {
			return nil, fmt.Errorf("read %q: %w", key, err)
		}
		return fields, nil
	}
	return nil, nil
}
