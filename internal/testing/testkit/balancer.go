// The balancer, for tests of rolling restarts: a load balancer that
// behaves as a Kubernetes Service does, and a steady load to put through
// it: the balancer learns of replicas as they start, polls their /readyz
// and sends requests, round robin, only to those that answered 200 last
// time.

package testkit

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Balancer is an http.Handler over the replicas added to it.
type Balancer struct {
	pollEvery time.Duration
	mu        sync.Mutex
	backends  []*backend
	next      atomic.Uint64
}

type backend struct {
	admin string
	proxy *httputil.ReverseProxy
	ready atomic.Bool
}

// NewBalancer returns a balancer that polls readiness every pollEvery once Poll runs.
func NewBalancer(pollEvery time.Duration) *Balancer {
	return &Balancer{pollEvery: pollEvery}
}

// Add puts the replica with these base URLs (api serves requests, admin
// /readyz) under the balancer's watch; it is in rotation from the first
// poll that finds it ready.
func (b *Balancer) Add(api, admin string) {
	u, err := url.Parse(api)
	if err != nil {
		panic(fmt.Sprintf("balancer: api URL %q: %v", api, err))
	}
	p := httputil.NewSingleHostReverseProxy(u)
	p.ErrorLog = log.New(io.Discard, "", 0) // failures are counted by the load
	b.mu.Lock()
	b.backends = append(b.backends, &backend{admin: admin, proxy: p})
	b.mu.Unlock()
}

// Poll updates the readiness of the backends until ctx is done.
func (b *Balancer) Poll(ctx context.Context) {
	client := &http.Client{Timeout: time.Second}
	t := time.NewTicker(b.pollEvery)
	defer t.Stop()
	for {
		b.mu.Lock()
		bs := append([]*backend(nil), b.backends...)
		b.mu.Unlock()
		for _, be := range bs {
			be.ready.Store(readyz(client, be.admin))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// readyz reports whether admin's /readyz answers 200.
func readyz(client *http.Client, admin string) bool {
	resp, err := client.Get(admin + "/readyz")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode == http.StatusOK
}

// Ready returns the number of backends in rotation.
func (b *Balancer) Ready() int {
	return len(b.ready())
}

func (b *Balancer) ready() []*backend {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ready []*backend
	for _, be := range b.backends {
		if be.ready.Load() {
			ready = append(ready, be)
		}
	}
	return ready
}

// ServeHTTP sends r to the next ready backend, or answers 503 if none is.
func (b *Balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ready := b.ready()
	if len(ready) == 0 {
		http.Error(w, "no ready backend", http.StatusServiceUnavailable)
		return
	}
	ready[b.next.Add(1)%uint64(len(ready))].proxy.ServeHTTP(w, r)
}
