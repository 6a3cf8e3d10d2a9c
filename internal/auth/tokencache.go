package auth

import (
	"crypto/sha256"
	"errors"
	"hash"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// maxCachedPrincipal bounds the memory of one cache entry: a principal
// larger than this (a token with very many scopes or tenants) is verified
// afresh every time. With it, an entry costs at most about 2.5 KiB, so the
// default 10,000 entries hold at most about 25 MB.
const maxCachedPrincipal = 2 << 10

// tokenCache remembers the tokens verified recently, so that a caller
// presenting the same token again is not verified afresh (an RS256
// verification is most of the cost of a request). It is safe because:
//
//   - it is keyed by the SHA-256 of the whole raw token (the token itself
//     is never kept), and an entry holds only the verified principal, the
//     time claims and the identity of the key that verified it;
//   - failures are never cached;
//   - every hit checks the time claims again, with tokenTimes.check, the
//     same function and skew as a fresh verification, and checks that the
//     key set in use still holds the key (its RFC 7638 thumbprint, kid and
//     algorithm) whenever the set changed since the entry was last
//     confirmed: a key removed from the JWKS invalidates its entries at once;
//   - an entry that fails a check is dropped and the token is verified
//     afresh, so the refusal is exactly the one a fresh check gives;
//   - issuer, audience and tenancy claim are fixed per server, and scope
//     and tenancy are checked on every request from the cached principal;
//   - it is bounded: an LRU of at most size entries, each at most
//     maxCachedPrincipal bytes of principal.
type tokenCache struct {
	lru *lru.Cache[[32]byte, *cacheEntry]
	m   *cacheMetrics
}

// cacheEntry is one verified token. Only gen changes after it is made.
type cacheEntry struct {
	p     *principal
	times tokenTimes
	key   keyIdentity
	// gen is the generation of a key set known to hold key.
	gen atomic.Uint64
}

// newTokenCache returns a cache of at most size entries, or nil when size
// is 0 or less (no cache).
func newTokenCache(size int, m *cacheMetrics) *tokenCache {
	if size <= 0 {
		return nil
	}
	c, err := lru.New[[32]byte, *cacheEntry](size)
	if err != nil {
		return nil // only for size <= 0
	}
	return &tokenCache{lru: c, m: m}
}

// get returns the principal of the token whose hash is sum, if it is
// cached and still valid at now with ks as the key set in use; nil
// otherwise (a miss: the caller verifies afresh).
func (c *tokenCache) get(sum [32]byte, now time.Time, ks *keySet) *principal {
	e, ok := c.lru.Get(sum)
	if !ok {
		c.m.misses.Inc()
		return nil
	}
	if e.times.check(now) != nil {
		c.drop(sum)
		return nil
	}
	if e.gen.Load() != ks.gen {
		if !ks.has(e.key) {
			c.drop(sum)
			return nil
		}
		e.gen.Store(ks.gen)
	}
	c.m.hits.Inc()
	return e.p
}

func (c *tokenCache) drop(sum [32]byte) {
	c.lru.Remove(sum)
	c.m.misses.Inc()
}

// add caches a fresh verification of the token whose hash is sum, unless
// it is too large or no longer valid at now.
func (c *tokenCache) add(sum [32]byte, v verified, now time.Time) {
	if v.p.size() > maxCachedPrincipal || v.times.check(now) != nil {
		return
	}
	e := &cacheEntry{p: v.p, times: v.times, key: v.key}
	e.gen.Store(v.gen)
	if c.lru.Add(sum, e) {
		c.m.evictions.Inc()
	}
}

// tokenHasher is a reusable SHA-256 state with its buffers.
type tokenHasher struct {
	h   hash.Hash
	buf []byte // a copy of the token (hash.Hash takes bytes)
	sum []byte
}

// wipe overwrites the partial-block buffer of a SHA-256 state.
var wipe [sha256.BlockSize - 1]byte

// hashers recycles the states of hashToken, so that it allocates nothing.
var hashers = sync.Pool{New: func() any {
	return &tokenHasher{h: sha256.New(), buf: make([]byte, 0, 2<<10), sum: make([]byte, 0, sha256.Size)}
}}

// hashToken returns the SHA-256 of raw. The copy of raw it makes is wiped
// before it returns: no token outlives its request in memory.
func hashToken(raw string) [32]byte {
	th := hashers.Get().(*tokenHasher)
	th.h.Reset()
	th.buf = append(th.buf[:0], raw...)
	th.h.Write(th.buf)
	clear(th.buf)
	th.sum = th.h.Sum(th.sum[:0])
	// The state keeps the token's last partial block: overwrite it.
	th.h.Reset()
	th.h.Write(wipe[:])
	var sum [32]byte
	copy(sum[:], th.sum)
	if cap(th.buf) <= maxTokenBytes {
		hashers.Put(th)
	}
	return sum
}

// cacheMetrics count the lookups of the token cache.
type cacheMetrics struct {
	hits, misses, evictions prometheus.Counter
}

func newCacheMetrics(reg prometheus.Registerer) (*cacheMetrics, error) {
	m := &cacheMetrics{
		hits: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lookup_token_cache_hits_total",
			Help: "Bearer tokens answered from the verified-token cache.",
		}),
		misses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lookup_token_cache_misses_total",
			Help: "Bearer tokens not in the verified-token cache, or whose entry was dropped (expired, key gone): verified afresh.",
		}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "lookup_token_cache_evictions_total",
			Help: "Entries evicted from the full verified-token cache to make room.",
		}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	for _, c := range []*prometheus.Counter{&m.hits, &m.misses, &m.evictions} {
		if *c, err = registerOrReuse(reg, *c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// registerOrReuse registers c, or returns the equal collector already
// registered (two verifiers may share one registry), as query's metrics do.
func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}
