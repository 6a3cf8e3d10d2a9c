package projector

import "github.com/dgraph-io/ristretto/v2/z"

// versionCacheMin is the fewest entity versions the cache keeps (see
// versionCacheEntries).
const versionCacheMin = 1 << 16

// versionEntryBytes is what one cached version costs in memory, rounded
// up: its key (versionKey), the version, and the map's own share.
const versionEntryBytes = 64

// versionCacheEntries returns how many entity versions the cache of a store
// with that memory budget keeps: what 1/16 of the budget holds (196,608 at
// the default 192 MiB), at least versionCacheMin (also without a budget).
// A version the cache holds is a lookup the writer does not make: under a
// stream of updates to entities seen recently, most version checks.
func versionCacheEntries(budget int64) int {
	return max(versionCacheMin, int(budget/16/versionEntryBytes))
}

// versionCache keeps the last version of recently seen entities, so that
// most version checks need no Badger lookup. It is used by the single
// writer only. committed mirrors the store; pending holds what the open
// transaction read or wrote and is merged into committed when, and only
// when, that transaction commits. committed is emptied before a merge that
// would take it past max entries (versionCacheEntries; so it holds at most
// that plus one transaction's keys), and on any write error. A batch
// (batch.go) consults it before any read; BenchmarkApply measures it.
//
// Keys are held in binary (see versionKey), not as strings, so that the
// maps hold no pointers and the garbage collector need not scan them.
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
	max     int // bound of committed; 0: versionCacheMin
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

// versionKey is an entity key in binary, exactly: its tag, then the 16
// bytes of its id, then for a signer the 16 bytes of its own id (the key
// holds the consumer's id first), zero for the others.
type versionKey [1 + 16 + 16]byte

// keyOf returns the binary form of an entity key: "c" or "b" and an id, or
// "s", a consumer id, "." and a signer id, the ids canonical lower-case
// UUIDs as events.NormalizeID leaves them. Every such key has one binary
// form and no two share it. ok is false for any other key, which the cache
// then does not hold (no entity key is one).
func keyOf(key []byte) (k versionKey, ok bool) {
	switch {
	case len(key) == 1+36 && (key[0] == tagConsumer || key[0] == tagContact):
		k[0] = key[0]
		return k, uuidBytes(k[1:17], key[1:])
	case len(key) == 1+36+1+36 && key[0] == tagSigner && key[37] == '.':
		k[0] = key[0]
		return k, uuidBytes(k[1:17], key[1:37]) && uuidBytes(k[17:], key[38:])
	}
	return k, false
}

// uuidBytes decodes the canonical lower-case text form of a UUID (8-4-4-4-12
// hex digits) in s into the 16 bytes of dst, and reports whether s was one.
func uuidBytes(dst, s []byte) bool {
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return false
	}
	j := 0
	for _, g := range [...]struct{ from, to int }{{0, 8}, {9, 13}, {14, 18}, {19, 23}, {24, 36}} {
		for i := g.from; i < g.to; i += 2 {
			hi, ok1 := lowerHex(s[i])
			lo, ok2 := lowerHex(s[i+1])
			if !ok1 || !ok2 {
				return false
			}
			dst[j] = hi<<4 | lo
			j++
		}
	}
	return true
}

// lowerHex is the value of a lower-case hex digit.
func lowerHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
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
	if len(c.committed)+len(c.pending) > max(c.max, versionCacheMin) {
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
