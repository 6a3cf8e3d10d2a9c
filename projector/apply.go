package projector

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/ristretto/v2/z"
	"github.com/lookup/persons/events"
)

// item is one message of the stream, ready to be applied: a decoded valid
// event, or an invalid one that has already been dead-lettered.
type item struct {
	seq   uint64    // stream sequence
	time  time.Time // stream timestamp
	valid bool      // false: dead-lettered, only advances the checkpoint
	ev    events.Event
}

// batchStats counts what a committed batch did.
type batchStats struct {
	applied, skipped, deadLettered uint64
}

func (a *batchStats) add(b batchStats) {
	a.applied += b.applied
	a.skipped += b.skipped
	a.deadLettered += b.deadLettered
}

// errTooBigSingle: a single event does not fit in one transaction.
var errTooBigSingle = errors.New("single event exceeds the transaction size")

// purgeChunk is the number of signers tombstoned per transaction when a
// consumer deletion does not fit in one transaction (halved while even that
// is too big).
const purgeChunk = 10_000

// applyBatch applies items (in stream order, sequences increasing) and moves
// the checkpoint to the last of them, in as few transactions as fit: one,
// unless Badger answers ErrTxnTooBig, when the batch is split. Each
// transaction writes the checkpoint of the events it covers. On error nothing
// of the failed transaction is written; the returned stats count the
// committed part only and the caller retries from the checkpoint.
func (s *Store) applyBatch(items []item) (batchStats, error) {
	var total batchStats
	for len(items) > 0 {
		n, st, err := s.applyTxn(items)
		if errors.Is(err, errTooBigSingle) {
			// Only a consumer deletion with a huge number of signers writes more
			// than one key; tombstone its signers in chunks first. That is
			// idempotent (each tombstone keeps the signer's version), so a crash
			// in between is repaired by re-applying the deletion.
			if err := s.purgeInChunks(items[0]); err != nil {
				return total, err
			}
			n, st, err = s.applyTxn(items[:1])
		}
		if err != nil {
			return total, err
		}
		total.add(st)
		items = items[n:]
	}
	return total, nil
}

// applyTxn applies a prefix of items in one transaction and returns its
// length: all of items unless the transaction grew too big.
func (s *Store) applyTxn(items []item) (int, batchStats, error) {
	n, st, err := s.writeTxn(items)
	if err != nil {
		// Whether a failed commit landed is unknown: forget every cached version.
		s.versions.reset()
	}
	return n, st, err
}

// writeTxn writes a prefix of items, and the checkpoint after it, in one
// transaction, a batch (batch.go): the longest prefix that fits (see
// applyTxn).
func (s *Store) writeTxn(items []item) (int, batchStats, error) {
	if err := s.hooks.beforeWrite(); err != nil {
		return 0, batchStats{}, err
	}
	if !s.emptinessChecked {
		if err := s.checkEmpty(); err != nil {
			return 0, batchStats{}, err
		}
	}
	b := s.newBatch(items)
	defer b.discard()
	for i := range items {
		if err := b.apply(i, &items[i]); err != nil {
			if errors.Is(err, badger.ErrTxnTooBig) {
				if i == 0 {
					return 0, batchStats{}, errTooBigSingle
				}
				b.discard()
				return s.writeTxn(items[:i])
			}
			return 0, batchStats{}, fmt.Errorf("apply event at stream sequence %d: %w", items[i].seq, err)
		}
	}
	last := items[len(items)-1]
	if err := b.setCheckpoint(last, s.ident); err != nil {
		if errors.Is(err, badger.ErrTxnTooBig) && len(items) > 1 {
			b.discard()
			return s.writeTxn(items[:len(items)-1])
		}
		return 0, batchStats{}, fmt.Errorf("write checkpoint %d: %w", last.seq, err)
	}
	if err := b.commit(); err != nil {
		return 0, batchStats{}, fmt.Errorf("commit events up to stream sequence %d: %w", last.seq, err)
	}
	return len(items), b.st, nil
}

// checkEmpty starts the version cache's filter of written keys (see
// versionCache.written) if the store holds no entity yet.
func (s *Store) checkEmpty() error {
	empty := true
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if it.Item().Key()[0] != tagMeta {
				empty = false
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("look for entities: %w", err)
	}
	s.emptinessChecked = true
	if empty {
		s.versions.written = z.NewBloomFilter(writtenFilterSize, 0.01)
	}
	s.foundEmpty = empty
	return nil
}

func encodeCheckpoint(seq uint64, t time.Time) []byte {
	v := make([]byte, 16)
	binary.BigEndian.PutUint64(v, seq)
	if !t.IsZero() {
		binary.BigEndian.PutUint64(v[8:], uint64(t.UnixNano()))
	}
	return v
}

// versionAt returns the entity version stored at key, 0 if none.
func versionAt(txn *badger.Txn, key []byte) (uint64, error) {
	var ver uint64
	err := viewValue(txn, key, func(v []byte) error {
		h, _, err := decodeHeader(v)
		ver = h.version
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("read %q: %w", key, err)
	}
	return ver, nil
}

// purgeSigners replaces the records of the live signers of consumerID by
// tombstones that keep each signer's version, at most limit of them when
// limit > 0. It returns how many it replaced.
func purgeSigners(txn *badger.Txn, consumerID string, limit int) (int, error) {
	type live struct {
		key     []byte
		version uint64
	}
	var found []live
	prefix := signerPrefix(consumerID)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		if limit > 0 && len(found) >= limit {
			break
		}
		item := it.Item()
		var (
			h   header
			err error
		)
		if verr := item.Value(func(v []byte) error {
			h, _, err = decodeHeader(v)
			return err
		}); verr != nil {
			it.Close()
			return 0, fmt.Errorf("read %q: %w", item.Key(), verr)
		}
		if !h.deleted {
			found = append(found, live{key: item.KeyCopy(nil), version: h.version})
		}
	}
	it.Close()
	for _, l := range found {
		if err := txn.Set(l.key, appendHeader(nil, l.version, true)); err != nil {
			return 0, err
		}
	}
	return len(found), nil
}

// purgeInChunks tombstones the signers of the consumer that it (a consumer
// deletion) is about, in transactions of at most purgeChunk signers, without moving
// the checkpoint.
func (s *Store) purgeInChunks(it item) error {
	d, ok := it.ev.Data.(events.ConsumerDeleted)
	if !ok || !it.valid {
		return fmt.Errorf("event at stream sequence %d: %w", it.seq, badger.ErrTxnTooBig)
	}
	chunk := purgeChunk
	for {
		txn := s.db.NewTransaction(true)
		n, err := purgeSigners(txn, d.ConsumerID, chunk)
		if err == nil {
			err = txn.Commit()
		}
		txn.Discard()
		if errors.Is(err, badger.ErrTxnTooBig) && chunk > 1 {
			chunk /= 2
			continue
		}
		if err != nil {
			return fmt.Errorf("purge signers of consumer %s: %w", d.ConsumerID, err)
		}
		if n < chunk {
			return nil
		}
	}
}
