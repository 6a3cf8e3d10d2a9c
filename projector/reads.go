package projector

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/lookup/persons/events"
)

// Person returns the consumer, else the business contact, with that id (any
// case). It returns events.ErrNotFound if neither exists or it was deleted.
func (s *Store) Person(ctx context.Context, id string) (events.Person, error) {
	if err := ctx.Err(); err != nil {
		return events.Person{}, err
	}
	id = strings.ToLower(id)
	var p events.Person
	err := s.db.View(func(txn *badger.Txn) error {
		for _, t := range []struct {
			tag byte
			typ events.PersonType
		}{{tagConsumer, events.PersonTypeConsumer}, {tagContact, events.PersonTypeBusinessContact}} {
			var (
				ok  bool
				err error
			)
			if p, ok, err = livePerson(txn, entityKey(t.tag, id)); err != nil {
				return err
			}
			if !ok {
				continue
			}
			p.ID, p.Type = id, t.typ
			return nil
		}
		return events.ErrNotFound
	})
	if err != nil {
		return events.Person{}, err
	}
	return p, nil
}

// Signers returns the consumer with that id (any case) and its signers, in
// signer-id order. It returns events.ErrNotFound if the consumer is unknown
// or deleted; a consumer without signers is returned with an empty slice, so
// that the caller can check whose consumer it is before answering.
//
// A consumer with signers is one point lookup: its signer set holds the
// consumer too. Only a consumer without signers, or whose set overflowed
// or is of an older layout, is read from its record as well; while a
// rebuild defers the sets (Store.deferSetsIfEmpty), every consumer is read
// from its records.
func (s *Store) Signers(ctx context.Context, consumerID string) (events.Person, []events.Signer, error) {
	if err := ctx.Err(); err != nil {
		return events.Person{}, nil, err
	}
	consumerID = strings.ToLower(consumerID)
	var (
		p       events.Person
		signers []events.Signer // made as large as the set, by readSetSigners
	)
	// Read before the snapshot is taken: once false, every set is in it.
	deferred := s.setsDeferred.Load()
	err := s.db.View(func(txn *badger.Txn) error {
		var (
			set setRead
			ok  bool
			err error
		)
		if deferred {
			set.overflow = true // no sets yet: read the records
		} else if signers, set, err = readSetSigners(txn, consumerID, signers); err != nil {
			return err
		}
		if set.found && !set.overflow && set.consumerKnown {
			if !set.live {
				return events.ErrNotFound
			}
			p = set.consumer
			p.ID, p.Type = consumerID, events.PersonTypeConsumer
			return nil
		}
		if p, ok, err = livePerson(txn, entityKey(tagConsumer, consumerID)); err != nil {
			return err
		}
		if !ok {
			return events.ErrNotFound
		}
		p.ID, p.Type = consumerID, events.PersonTypeConsumer
		if !set.overflow {
			return nil
		}
		signers, err = scanSigners(txn, consumerID, signers)
		return err
	})
	if err != nil {
		return events.Person{}, nil, err
	}
	return p, signers, nil
}

// scanSigners appends the live signers of consumerID to into, read from
// their records by a prefix scan, in signer-id order: the read of a
// consumer whose signer set overflowed (see signerset.go).
func scanSigners(txn *badger.Txn, consumerID string, into []events.Signer) ([]events.Signer, error) {
	prefix := signerPrefix(consumerID)
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix}) // values are read in place, not prefetched into copies
	defer it.Close()
	for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
		item := it.Item()
		err := item.Value(func(v []byte) error {
			h, rest, err := decodeHeader(v)
			if err != nil || h.deleted {
				return err
			}
			sg, err := decodeSigner(rest)
			if err != nil {
				return err
			}
			sg.ConsumerID = consumerID
			sg.SignerID = string(item.Key()[len(prefix):])
			into = append(into, sg)
			return nil
		})
		if err != nil {
			return into, fmt.Errorf("read signer %q: %w", item.Key(), err)
		}
	}
	return into, nil
}

// checkpoint returns the checkpoint's sequence and the stream time of that event.
func (s *Store) checkpoint() (uint64, time.Time, error) {
	var (
		seq uint64
		ts  time.Time
	)
	err := s.db.View(func(txn *badger.Txn) error {
		return viewValue(txn, keyCheckpoint, func(v []byte) (err error) {
			seq, ts, err = decodeCheckpoint(v)
			return err
		})
	})
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("read checkpoint: %w", err)
	}
	return seq, ts, nil
}

// decodeCheckpoint decodes a checkpoint value (encodeCheckpoint).
func decodeCheckpoint(v []byte) (seq uint64, ts time.Time, err error) {
	if len(v) != 16 {
		return 0, time.Time{}, fmt.Errorf("corrupt checkpoint: %d bytes", len(v))
	}
	seq = binary.BigEndian.Uint64(v)
	n := binary.BigEndian.Uint64(v[8:])
	if n > math.MaxInt64 {
		return 0, time.Time{}, fmt.Errorf("corrupt checkpoint: time out of range")
	}
	if n != 0 {
		ts = time.Unix(0, int64(n)).UTC()
	}
	return seq, ts, nil
}

// livePerson decodes the live (not deleted) consumer or contact at key,
// ok false when the key is absent or a tombstone. The fields are decoded
// from the value in place: decodePerson makes their one copy.
func livePerson(txn *badger.Txn, key []byte) (p events.Person, ok bool, err error) {
	err = viewValue(txn, key, func(v []byte) error {
		h, rest, err := decodeHeader(v)
		if err != nil || h.deleted {
			return err
		}
		p, err = decodePerson(rest)
		ok = err == nil
		return err
	})
	if err != nil {
		return events.Person{}, false, fmt.Errorf("read %q: %w", key, err)
	}
	return p, ok, nil
}

// viewValue calls f with the value at key, which f must not keep (see
// badger.Item.Value). An absent key is no error; f is then not called.
func viewValue(txn *badger.Txn, key []byte, f func(v []byte) error) error {
	item, err := txn.Get(key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return item.Value(f)
}
