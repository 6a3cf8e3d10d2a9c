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
// its live signers, in signer-id order, kept by the writer in the same
// transaction as the signer records it copies. GET authorized signers
// reads it with one point lookup, where a prefix scan of the signer records
// costs a seek in every level of the store (a Bloom filter, which spares a
// point lookup the levels that lack its key, cannot answer for a prefix).
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

// setFlagOverflow marks a set that holds no entries: read the records.
const setFlagOverflow = 1

// signerSet is a decoded signer set: entries in signer-id order, or
// overflowed.
type signerSet struct {
	overflow bool
	entries  []setEntry
}

// setEntry is one signer of a set: its id and the fields of its record
// (the value after the header: see encodeSigner).
type setEntry struct {
	id     string
	fields []byte
}

// encode returns the value of the set: the format byte, a flag byte
// (setFlagOverflow), then, unless overflowed, the uvarint count of entries
// and each entry's id and fields as length-prefixed strings.
func (s *signerSet) encode() []byte {
	if s.overflow {
		return []byte{formatV1, setFlagOverflow}
	}
	n := 2 + binary.MaxVarintLen64
	for _, e := range s.entries {
		n += 2*binary.MaxVarintLen64 + len(e.id) + len(e.fields)
	}
	b := make([]byte, 0, n)
	b = append(b, formatV1, 0)
	b = binary.AppendUvarint(b, uint64(len(s.entries)))
	for _, e := range s.entries {
		b = binary.AppendUvarint(b, uint64(len(e.id)))
		b = append(b, e.id...)
		b = binary.AppendUvarint(b, uint64(len(e.fields)))
		b = append(b, e.fields...)
	}
	return b
}

// eachSetEntry calls f with the id and fields of each entry of the set's
// value v, in order, as slices of v; it reports whether the set says it
// overflowed (then it has no entries).
func eachSetEntry(v []byte, f func(id, fields []byte) error) (overflow bool, err error) {
	if len(v) < 2 || v[0] != formatV1 {
		return false, errCorrupt
	}
	if v[1]&setFlagOverflow != 0 {
		return true, nil
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
	n, k := binary.Uvarint(b)
	if k <= 0 || n > maxSetSigners {
		return false, errCorrupt
	}
	b = b[k:]
	for range n {
		id, ok1 := next()
		fields, ok2 := next()
		if !ok1 || !ok2 {
			return false, errCorrupt
		}
		if err := f(id, fields); err != nil {
			return false, err
		}
	}
	if len(b) != 0 {
		return false, errCorrupt
	}
	return false, nil
}

// decodeSignerSet decodes a set's value for the writer; the entries'
// fields share one copy of v.
func decodeSignerSet(v []byte) (signerSet, error) {
	v = bytes.Clone(v)
	var set signerSet
	overflow, err := eachSetEntry(v, func(id, fields []byte) error {
		set.entries = append(set.entries, setEntry{id: string(id), fields: fields})
		return nil
	})
	if err != nil {
		return signerSet{}, err
	}
	set.overflow = overflow
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
		*s = signerSet{overflow: true}
	}
}

// readSetSigners appends the signers of consumerID held by its signer
// set to into, decoded from the value in place (decodeSigner makes their
// one copy). ok is false when the consumer has no set, overflow true when
// its set says to read the records instead.
func readSetSigners(txn *badger.Txn, consumerID string, into []events.Signer) (out []events.Signer, ok, overflow bool, err error) {
	key := entityKey(tagSignerSet, consumerID)
	out = into
	err = viewValue(txn, key, func(v []byte) error {
		ok = true
		overflow, err = eachSetEntry(v, func(id, fields []byte) error {
			sg, err := decodeSigner(fields)
			if err != nil {
				return err
			}
			sg.ConsumerID, sg.SignerID = consumerID, string(id)
			out = append(out, sg)
			return nil
		})
		return err
	})
	if err != nil {
		return into, false, false, fmt.Errorf("read signer set %q: %w", key, err)
	}
	return out, ok, overflow, nil
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

// updateSignerSet sets, in txn, the entry of the signer (consumerID,
// signerID) in its consumer's set to fields, nil for a tombstone, for the
// batch's item i (b: what the batch read and wrote of the sets so far).
func updateSignerSet(txn *badger.Txn, vc *versionCache, b *batchReads, i int, consumerID, signerID string, fields []byte) error {
	st, err := b.current(txn, vc, i, consumerID)
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
		return txn.Delete(key)
	}
	st.stored = true
	vc.wrote(key)
	return txn.Set(key, st.set.encode())
}

// keepSignerSet updates the set of consumerID for the record val just
// written for its signer signerID: the record's fields, or none for a
// tombstone.
func keepSignerSet(txn *badger.Txn, vc *versionCache, b *batchReads, i int, consumerID, signerID string, val []byte) error {
	h, fields, err := decodeHeader(val)
	if err != nil {
		return err
	}
	if h.deleted {
		fields = nil
	}
	return updateSignerSet(txn, vc, b, i, consumerID, signerID, fields)
}

// dropSignerSet deletes, in txn, the signer set of consumerID (its signers
// purged with it).
func dropSignerSet(txn *badger.Txn, vc *versionCache, b *batchReads, consumerID string) error {
	b.sets[consumerID] = &setState{}
	if key := entityKey(tagSignerSet, consumerID); vc.mayExist(key) {
		return txn.Delete(key)
	}
	return nil
}
