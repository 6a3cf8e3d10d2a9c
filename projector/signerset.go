package projector

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	"github.com/lookup/persons/events"
)

// A consumer's signer set ("l" <consumer_id>) is a copy of the fields of
// its live signers, in signer-id order, and of the consumer's own record
// (its fields when it is live, none when it is absent or deleted), kept by
// the writer in the same transaction as the records it copies. GET
// authorized signers reads it with one point lookup, where a prefix scan
// of the signer records costs a seek in every level of the store (a Bloom
// filter, which spares a point lookup the levels that lack its key, cannot
// answer for a prefix), and a second point lookup for the consumer costs
// as much again (about 9 µs each at 1M people and 1M signers).
//
// A set holds at most maxSetSigners signers and maxSetBytes of fields: a
// consumer past either is marked overflowed (no entries) and its signers
// are read by the prefix scan, until the consumer's deletion removes the
// set. Sets are derived data: buildSignerSets makes them again from the
// signer records whenever the marker "m" "signersets" does not hold the
// checkpoint's sequence (a store written before sets existed, or by an
// older build that moved the checkpoint without keeping the sets).
const (
	maxSetSigners = 64
	maxSetBytes   = 32 << 10
)

// Flags of a set's value. setFlagOverflow marks a set that holds no
// entries: read the records. setFlagConsumer marks a set that holds its
// consumer's state (every set this build writes that has not overflowed;
// a set without it, of an older layout, sends the reader to the consumer's
// record); setFlagConsumerLive, that the consumer is live and its fields
// follow.
const (
	setFlagOverflow     = 1
	setFlagConsumer     = 2
	setFlagConsumerLive = 4
)

// signerSet is a decoded signer set: the consumer's state and entries in
// signer-id order, or overflowed.
type signerSet struct {
	setHead
	entries []setEntry
}

// setEntry is one signer of a set: its id and the fields of its record
// (the value after the header: see encodeSigner).
type setEntry struct {
	id     string
	fields []byte
}

// encode returns the value of the set: the format byte, a flag byte,
// then, unless overflowed, the consumer's fields as a length-prefixed
// string when it is known and live, the uvarint count of entries and each
// entry's id and fields as length-prefixed strings.
func (s *signerSet) encode() []byte {
	if s.overflow {
		return []byte{formatV1, setFlagOverflow}
	}
	n := 2 + 2*binary.MaxVarintLen64 + len(s.consumer)
	for _, e := range s.entries {
		n += 2*binary.MaxVarintLen64 + len(e.id) + len(e.fields)
	}
	b := make([]byte, 0, n)
	var flags byte
	if s.consumerKnown {
		flags |= setFlagConsumer
		if s.consumer != nil {
			flags |= setFlagConsumerLive
		}
	}
	b = append(b, formatV1, flags)
	if flags&setFlagConsumerLive != 0 {
		b = binary.AppendUvarint(b, uint64(len(s.consumer)))
		b = append(b, s.consumer...)
	}
	b = binary.AppendUvarint(b, uint64(len(s.entries)))
	for _, e := range s.entries {
		b = binary.AppendUvarint(b, uint64(len(e.id)))
		b = append(b, e.id...)
		b = binary.AppendUvarint(b, uint64(len(e.fields)))
		b = append(b, e.fields...)
	}
	return b
}

// setHead is what a set's value says before its entries.
type setHead struct {
	overflow      bool // no entries: read the records
	consumerKnown bool // consumer is the consumer's state
	// consumer holds the live consumer's fields, those of its record after
	// the header (see encodePerson); nil: absent or deleted. Decoded, a
	// slice of the value.
	consumer []byte
}

// eachSetEntry calls f with the index, the count, the id and the fields
// of each entry of the set's value v, in order, as slices of v, and
// returns what the value says before them (when it overflowed, it has no
// entries).
func eachSetEntry(v []byte, f func(i, n int, id, fields []byte) error) (head setHead, err error) {
	if len(v) < 2 || v[0] != formatV1 {
		return setHead{}, errCorrupt
	}
	flags := v[1]
	if flags&setFlagOverflow != 0 {
		return setHead{overflow: true}, nil
	}
	b := v[2:]
	next := func() ([]byte, bool) {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) { //nolint:gosec // G115: len(b)-k is not negative (k <= len(b))
			return nil, false
		}
		field := b[k : k+int(n)] //nolint:gosec // G115: n is at most len(b)
		b = b[k+int(n):]         //nolint:gosec // G115: as above
		return field, true
	}
	head.consumerKnown = flags&setFlagConsumer != 0
	if flags&setFlagConsumerLive != 0 {
		c, ok := next()
		if !ok || !head.consumerKnown {
			return setHead{}, errCorrupt
		}
		head.consumer = c
	}
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxSetSigners {
		return setHead{}, errCorrupt
	}
	b = b[k:]
	for i := range int(n) { //nolint:gosec // G115: n is at most maxSetSigners
		id, ok1 := next()
		fields, ok2 := next()
		if !ok1 || !ok2 {
			return setHead{}, errCorrupt
		}
		if err := f(i, int(n), id, fields); err != nil { //nolint:gosec // G115: as above
			return setHead{}, err
		}
	}
	if len(b) != 0 {
		return setHead{}, errCorrupt
	}
	return head, nil
}

// decodeSignerSet decodes a set's value for the writer; the entries'
// fields share one copy of v.
func decodeSignerSet(v []byte) (signerSet, error) {
	v = bytes.Clone(v)
	var set signerSet
	head, err := eachSetEntry(v, func(_, _ int, id, fields []byte) error {
		set.entries = append(set.entries, setEntry{id: string(id), fields: fields})
		return nil
	})
	if err != nil {
		return signerSet{}, err
	}
	set.setHead = head
	return set, nil
}

// put sets the entry of signer id to fields (nil: removes it), keeping
// signer-id order, and overflows the set when it grows past its bounds.
func (s *signerSet) put(id string, fields []byte) {
	if s.overflow {
		return
	}
	i, found := slices.BinarySearchFunc(s.entries, id, func(e setEntry, id string) int { return strings.Compare(e.id, id) })
	switch {
	case fields == nil && found:
		s.entries = slices.Delete(s.entries, i, i+1)
	case fields == nil:
	case found:
		s.entries[i].fields = fields
	default:
		s.entries = slices.Insert(s.entries, i, setEntry{id: id, fields: fields})
	}
	size := 0
	for _, e := range s.entries {
		size += len(e.id) + len(e.fields)
	}
	if len(s.entries) > maxSetSigners || size > maxSetBytes {
		*s = signerSet{setHead: setHead{overflow: true}}
	}
}

// setRead is what readSetSigners found of a consumer's set.
type setRead struct {
	found    bool // the consumer has a set
	overflow bool // its set says to read the signer records instead
	// consumerKnown: the set holds the consumer's state, which is
	// consumer when live is true, and absent or deleted otherwise.
	consumerKnown, live bool
	consumer            events.Person // ID and Type left for the caller
}

// readSetSigners appends the signers of consumerID held by its signer
// set to into, grown once to hold them, decoded from the value in place
// (decodeSigner and decodePerson make their one copy), and returns what
// else the set says.
func readSetSigners(txn *badger.Txn, consumerID string, into []events.Signer) (out []events.Signer, r setRead, err error) {
	key := entityKey(tagSignerSet, consumerID)
	out = into
	err = viewValue(txn, key, func(v []byte) error {
		r.found = true
		head, err := eachSetEntry(v, func(i, n int, id, fields []byte) error {
			if i == 0 {
				out = slices.Grow(out, n)
			}
			sg, err := decodeSigner(fields)
			if err != nil {
				return err
			}
			sg.ConsumerID, sg.SignerID = consumerID, string(id)
			out = append(out, sg)
			return nil
		})
		if err != nil {
			return err
		}
		r.overflow, r.consumerKnown, r.live = head.overflow, head.consumerKnown, head.consumer != nil
		if r.live {
			r.consumer, err = decodePerson(head.consumer)
		}
		return err
	})
	if err != nil {
		return into, setRead{}, fmt.Errorf("read signer set %q: %w", key, err)
	}
	return out, r, nil
}

// readSignerSet returns the set at key, ok false when there is none.
func readSignerSet(txn *badger.Txn, key []byte) (set signerSet, ok bool, err error) {
	err = viewValue(txn, key, func(v []byte) error {
		set, err = decodeSignerSet(v)
		ok = err == nil
		return err
	})
	if err != nil {
		return signerSet{}, false, fmt.Errorf("read %q: %w", key, err)
	}
	return set, ok, nil
}

// The writer keeps the signer sets through a batch (batch.go): its sets
// and consumers hold what the transaction has made of them so far, which
// supersedes what was read before it.

// setState is a consumer's signer set as the transaction has left it, and
// whether its key holds it (false: absent, or deleted by the transaction).
type setState struct {
	set    signerSet
	stored bool
}

// currentSet returns the signer set of consumerID as the transaction has
// left it so far, for item i: from sets, else what prefetch read, else
// read now.
func (b *batch) currentSet(i int, consumerID string) (*setState, error) {
	if st, ok := b.sets[consumerID]; ok {
		return st, nil
	}
	st := &setState{}
	pre, read := b.reads.set(i)
	switch key := entityKey(tagSignerSet, consumerID); {
	case read:
		if pre != nil {
			st.set, st.stored = *pre, true
		}
	case b.vc.mayExist(key):
		set, exists, err := readSignerSet(b.txn, key)
		if err != nil {
			return nil, err
		}
		st.set, st.stored = set, exists
	}
	b.sets[consumerID] = st
	return st, nil
}

// consumer returns the fields of consumerID's record as the transaction
// has left it so far, for item i (nil: none live): from consumers, else
// what prefetch read, else read now.
func (b *batch) consumer(i int, consumerID string) ([]byte, error) {
	if c, ok := b.consumers[consumerID]; ok {
		return c, nil
	}
	if c, read := b.reads.consumer(i); read {
		return c, nil
	}
	return liveFields(b.txn, b.vc, entityKey(tagConsumer, consumerID))
}

// updateSignerSet sets the entry of the signer (consumerID, signerID) in
// its consumer's set to fields, nil for a tombstone, for item i.
func (b *batch) updateSignerSet(i int, consumerID, signerID string, fields []byte) error {
	st, err := b.currentSet(i, consumerID)
	if err != nil {
		return err
	}
	if st.set.overflow && st.stored {
		return nil // stays overflowed until the consumer's deletion: nothing to write
	}
	st.set.put(signerID, fields)
	key := entityKey(tagSignerSet, consumerID)
	if !st.set.overflow && len(st.set.entries) == 0 {
		if !st.stored {
			return nil
		}
		st.stored = false
		return b.txn.Delete(key)
	}
	if !st.set.overflow && !st.set.consumerKnown {
		// A new set (or one of an older layout): the consumer as it is now.
		c, err := b.consumer(i, consumerID)
		if err != nil {
			return err
		}
		st.set.consumer, st.set.consumerKnown = c, true
	}
	st.stored = true
	b.vc.wrote(key)
	return b.txn.Set(key, st.set.encode())
}

// keepSetConsumer updates the copy of consumerID's record in its signer
// set, if it has one, for the consumer record val just written for item i
// (a live consumer's: a deletion drops the set).
func (b *batch) keepSetConsumer(i int, consumerID string, val []byte) error {
	h, fields, err := decodeHeader(val)
	if err != nil {
		return err
	}
	if h.deleted {
		fields = nil
	}
	b.consumers[consumerID] = fields
	st, err := b.currentSet(i, consumerID)
	if err != nil {
		return err
	}
	if st.set.overflow {
		return nil
	}
	// Kept even when the transaction has emptied the set: a signer may
	// make it again later in the transaction.
	st.set.consumer, st.set.consumerKnown = fields, true
	if !st.stored {
		return nil
	}
	key := entityKey(tagSignerSet, consumerID)
	b.vc.wrote(key)
	return b.txn.Set(key, st.set.encode())
}

// keepSignerSet updates the set of consumerID for the record val just
// written for its signer signerID, item i: the record's fields, or none
// for a tombstone.
func (b *batch) keepSignerSet(i int, consumerID, signerID string, val []byte) error {
	h, fields, err := decodeHeader(val)
	if err != nil {
		return err
	}
	if h.deleted {
		fields = nil
	}
	return b.updateSignerSet(i, consumerID, signerID, fields)
}

// dropSignerSet deletes the signer set of consumerID (its signers purged
// with it).
func (b *batch) dropSignerSet(consumerID string) error {
	if b.deferSets {
		return nil
	}
	b.sets[consumerID] = &setState{}
	b.consumers[consumerID] = nil // deleted: a set made later in the batch says so
	if key := entityKey(tagSignerSet, consumerID); b.vc.mayExist(key) {
		return b.txn.Delete(key)
	}
	return nil
}
