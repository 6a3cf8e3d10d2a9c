package soak

import (
	"net/http"
	"sync/atomic"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// LookupTargets returns the requests of a soak against the API at base:
// GET person and GET signers with expand=PROTECTED_PERSONAL_DATA, in turn,
// each of a consumer of p drawn at random (uniformly, so that the whole
// read model is read, not a hot few), with tokens in rotation. It is safe
// for many goroutines at once, as vegeta calls it.
func LookupTargets(base string, p *fixtures.Population, tokens []string) vegeta.Targeter {
	headers := make([]http.Header, len(tokens))
	for i, t := range tokens {
		headers[i] = http.Header{"Authorization": {"Bearer " + t}}
	}
	var n atomic.Uint64
	return func(t *vegeta.Target) error {
		k := n.Add(1) - 1
		path, id := soakPath(k, p.People())
		t.Method, t.URL, t.Header = http.MethodGet, base+path+p.ConsumerID(id)+soakQuery(k), nil
		if len(headers) > 0 {
			t.Header = headers[k%uint64(len(headers))]
		}
		return nil
	}
}

// soakPath returns the path (less the id) of the k-th request of a soak
// and the index of the consumer it reads, among people: even requests are
// GET person, odd ones GET signers; the index is a hash of k.
func soakPath(k uint64, people int) (string, int) {
	id := int(splitmix64(k) % uint64(people)) //nolint:gosec // G115: less than people, an int
	if k%2 == 0 {
		return "/api/v1/persons/", id
	}
	return "/api/v1/authorized-signers?consumer_id=", id
}

// soakQuery is what follows the id of the k-th request (see soakPath).
func soakQuery(k uint64) string {
	if k%2 == 0 {
		return ""
	}
	return "&expand=PROTECTED_PERSONAL_DATA"
}

// splitmix64 is a fast, well-mixed hash of x (SplitMix64's finalizer).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
