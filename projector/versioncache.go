package projector

import "github.com/dgraph-io/ristretto/v2/z"

// versionCacheMax bounds the number of entity versions kept in memory.
const versionCacheMax = 1 << 16

// versionCache keeps the last version of recently seen entities, so that
// most version checks need no Badger lookup. It is used by the single
// writer only. committed mirrors the store; pending holds what the open
// transaction read or wrote and is merged into committed when, and only
// when, that transaction commits. committed is emptied before a merge that
// would take it past versionCacheMax entries (so it holds at most that plus
// one transaction's keys), and on any write error.
//
// Keys are held as fixed-size arrays (see versionKey), not strings, so that
// the maps hold no pointers and the garbage collector need not scan them.
type versionCache struct {
	committed, pending map[versionKey]uint64
	// written, when non-nil, holds (as a Bloom filter: no false negatives)
	// every entity key written since the store was found empty: a key it
	// does not hold is in no version of the store, and its version is 0
	// without a Badger lookup. A rebuild checks the version of every new
	// entity, and a lookup of a missing key searches every level of the
	// store. It is never emptied: a key of a failed transaction may stay in
	// it, which costs at most a lookup.
	written *z.Bloom
}

// writtenFilterSize is the number of keys the written filter is sized for
// (4.8 MB at a 1% false positive rate); past that it answers "maybe" more
// often, which costs lookups only.
const writtenFilterSize = 4_000_000

// mayExist reports whether key may be in the store (see written).
func (c *versionCache) mayExist(key []byte) bool {
	return c.written == nil || c.written.Has(z.MemHash(key))
}

// wrote records that key was written (see written).
func (c *versionCache) wrote(key []byte) {
	if c.written != nil {
		c.written.Add(z.MemHash(key))
	}
}

// versionKeyMax is the length of the longest entity key: a signer's, the
// tag then two 36-character ids and a '.'.
const versionKeyMax = 1 + 36 + 1 + 36

// versionKey is an entity key, zero-padded, and its length.
type versionKey struct {
	b [versionKeyMax]byte
	n uint8
}

// keyOf returns key as a versionKey, ok false if it is too long to be one
// (no entity key is).
func keyOf(key []byte) (k versionKey, ok bool) {
	n := len(key)
	if n > versionKeyMax {
		return k, false
	}
	copy(k.b[:], key)
	k.n = uint8(n)
	return k, true
}

func (c *versionCache) begin() {
	if c.pending == nil {
		c.pending = make(map[versionKey]uint64)
		c.committed = make(map[versionKey]uint64)
	}
	clear(c.pending)
}

func (c *versionCache) get(key []byte) (uint64, bool) {
	k, ok := keyOf(key)
	if !ok {
		return 0, false
	}
	if v, ok := c.pending[k]; ok {
		return v, true
	}
	v, ok := c.committed[k]
	return v, ok
}

func (c *versionCache) put(key []byte, v uint64) {
	if k, ok := keyOf(key); ok {
		c.pending[k] = v
	}
}

func (c *versionCache) commit() {
	if len(c.committed)+len(c.pending) > versionCacheMax {
		clear(c.committed)
	}
	for k, v := range c.pending {
		c.committed[k] = v
	}
	clear(c.pending)
}

func (c *versionCache) reset() {
	clear(c.committed)
	clear(c.pending)
}
