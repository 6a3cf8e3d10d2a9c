package projector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/lookup/persons/events"
)

// A Deletion is a deletion event the projector applied: the deletion of a
// consumer, a business contact or an authorized signer that was newer than
// the entity (not one skipped as stale or duplicate, not an invalid one).
// It holds ids only, never personal data.
type Deletion struct {
	Seq    uint64        // stream sequence of the deletion event
	Time   time.Time     // the event's stream time (zero if the message had none)
	Entity events.Entity // Kind, ID, ConsumerID (ConsumerID is "" for a contact)
}

// deletionsPage is how many deletion records Deletions reads in one read
// transaction before calling fn with them, outside it.
const deletionsPage = 256

// deletionKey is the key of the record of the deletion at stream sequence
// seq: tagDeletion and seq, 8 bytes big-endian, so that the records are in
// stream order.
func deletionKey(seq uint64) []byte {
	k := make([]byte, 9)
	k[0] = tagDeletion
	binary.BigEndian.PutUint64(k[1:], seq)
	return k
}

// encodeDeletion encodes the record of a deletion (see Key layout in the
// package documentation): the format byte, the entity's kind, its stream
// time and its ids.
func encodeDeletion(t time.Time, ent events.Entity) []byte {
	b := make([]byte, 10, 12+len(ent.ID)+len(ent.ConsumerID))
	b[0], b[1] = formatV1, byte(ent.Kind)
	if !t.IsZero() {
		binary.BigEndian.PutUint64(b[2:], uint64(t.UnixNano())) //nolint:gosec // G115: a stream time after 1970
	}
	return appendStrings(b, ent.ID, ent.ConsumerID)
}

// decodeDeletion decodes the record of the deletion at key.
func decodeDeletion(key, v []byte) (Deletion, error) {
	if len(key) != 9 || len(v) < 10 || v[0] != formatV1 {
		return Deletion{}, fmt.Errorf("deletion record %x: %w", key, errCorrupt)
	}
	d := Deletion{Seq: binary.BigEndian.Uint64(key[1:]), Entity: events.Entity{Kind: events.Kind(v[1])}}
	if n := binary.BigEndian.Uint64(v[2:10]); n != 0 && n <= math.MaxInt64 {
		d.Time = time.Unix(0, int64(n)).UTC()
	}
	r := newReader(v[10:])
	d.Entity.ID, d.Entity.ConsumerID = r.nextString(), r.nextString()
	if r.err != nil {
		return Deletion{}, fmt.Errorf("deletion record %x: %w", key, r.err)
	}
	return d, nil
}

// recordDeletion writes the record of the deletion it, applied in this
// transaction, about ent.
func (b *batch) recordDeletion(it *item, ent events.Entity) error {
	return b.txn.Set(deletionKey(it.seq), encodeDeletion(it.time, ent))
}

// Deletions calls fn with each deletion the projector applied with Seq >
// after, in stream order, until fn returns an error (returned as is), ctx
// is done (ctx's error) or there is none left (nil). The records are read
// a page at a time and fn is called outside any transaction of the store,
// so fn may take its time; a deletion applied meanwhile is passed to fn if
// the scan has not gone past it. The store keeps a deletion's record for
// as long as it keeps the store (it holds ids only); a snapshot carries
// the records.
func (s *Store) Deletions(ctx context.Context, after uint64, fn func(Deletion) error) error {
	for after < math.MaxUint64 {
		page, err := s.deletionsPage(ctx, after)
		if err != nil {
			return err
		}
		for _, d := range page {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(d); err != nil {
				return err
			}
			after = d.Seq
		}
		if len(page) < deletionsPage {
			return nil
		}
	}
	return nil
}

// deletionsPage reads up to deletionsPage deletion records with Seq >
// after, in stream order.
func (s *Store) deletionsPage(ctx context.Context, after uint64) ([]Deletion, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var page []Deletion
	err := s.db.View(func(txn *badger.Txn) error {
		prefix := []byte{tagDeletion}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, PrefetchValues: true, PrefetchSize: 64})
		defer it.Close()
		for it.Seek(deletionKey(after + 1)); it.ValidForPrefix(prefix) && len(page) < deletionsPage; it.Next() {
			var d Deletion
			err := it.Item().Value(func(v []byte) error {
				var err error
				d, err = decodeDeletion(it.Item().Key(), v)
				return err
			})
			if err != nil {
				return err
			}
			page = append(page, d)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the deletions of %s: %w", s.dir, err)
	}
	return page, nil
}

// LastDeletion returns the stream sequence of the newest deletion the
// projector applied to the store, 0 if none.
func (s *Store) LastDeletion() (uint64, error) {
	var seq uint64
	err := s.db.View(func(txn *badger.Txn) error {
		prefix := []byte{tagDeletion}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix, Reverse: true})
		defer it.Close()
		it.Seek(deletionKey(math.MaxUint64))
		if !it.ValidForPrefix(prefix) {
			return nil
		}
		key := it.Item().Key()
		if len(key) != 9 {
			return fmt.Errorf("deletion record %x: %w", key, errCorrupt)
		}
		seq = binary.BigEndian.Uint64(key[1:])
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("read the last deletion of %s: %w", s.dir, err)
	}
	return seq, nil
}
