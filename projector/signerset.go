package projector

import (
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

// decodeSignerSet decodes a set's value; the entries' ids and fields share
// one copy of v.
func decodeSignerSet(v []byte) (signerSet, error) {
	if len(v) < 2 || v[0] != formatV1 {
		return signerSet{}, errCorrupt
	}
	if v[1]&setFlagOverflow != 0 {
		return signerSet{overflow: true}, nil
	}
	r := newReader(v[2:])
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > maxSetSigners {
		return signerSet{}, errCorrupt
	}
	r.b, r.s = r.b[k:], r.s[k:]
	set := signerSet{entries: make([]setEntry, 0, n)}
	for range n {
		id := r.nextString()
		fields := r.nextString()
		set.entries = append(set.entries, setEntry{id: id, fields: []byte(fields)})
	}
	if r.err != nil || len(r.b) != 0 {
		return signerSet{}, errCorrupt
	}
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

// signers decodes the set's entries as the signers of consumerID.
func (s *signerSet) signers(consumerID string, into []events.Signer) ([]events.Signer, error) {
	for _, e := range s.entries {
		sg, err := decodeSigner(e.fields)
		if err != nil {
			return into, fmt.Errorf("read signer set of %q: %w", consumerID, err)
		}
		sg.ConsumerID, sg.SignerID = consumerID, e.id
		into = append(into, sg)
	}
	return into, nil
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
