//go:build integration

package integration

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lookup/persons/events"
)

// balancer stands in for a Kubernetes Service: it learns of replicas as
// they start, polls their /readyz every pollEvery and sends requests,
// round robin, only to those that answered 200 last time.
type balancer struct {
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

// add puts the replica with these base URLs under the balancer's watch.
func (b *balancer) add(api, admin string) {
	u, _ := url.Parse(api)
	p := httputil.NewSingleHostReverseProxy(u)
	p.ErrorLog = log.New(io.Discard, "", 0) // failures are counted by the load
	b.mu.Lock()
	b.backends = append(b.backends, &backend{admin: admin, proxy: p})
	b.mu.Unlock()
}

// poll updates the readiness of the backends until ctx is done.
func (b *balancer) poll(ctx context.Context) {
	client := &http.Client{Timeout: time.Second}
	t := time.NewTicker(b.pollEvery)
	defer t.Stop()
	for {
		b.mu.Lock()
		bs := append([]*backend(nil), b.backends...)
		b.mu.Unlock()
		for _, be := range bs {
			resp, err := client.Get(be.admin + "/readyz")
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			be.ready.Store(err == nil && resp.StatusCode == http.StatusOK)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (b *balancer) ready() []*backend {
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

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ready := b.ready()
	if len(ready) == 0 {
		http.Error(w, "no ready backend", http.StatusServiceUnavailable)
		return
	}
	ready[b.next.Add(1)%uint64(len(ready))].proxy.ServeHTTP(w, r)
}

// TestRollingUpdate replaces three lookupd containers one after the other
// (docker stop: SIGTERM, then a new container on the same volume), behind
// a balancer that follows /readyz, under a steady load. With
// LOOKUP_SHUTDOWN_DELAY longer than the balancer takes to notice, no
// request fails; the same update without a delay is the baseline.
func TestRollingUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nw, _, js := singleNATS(ctx, t)
	ev, err := events.NewEvent(testSource, 1, events.Consumer{
		ConsumerID: uuid.NewString(), BusinessID: uuid.NewString(), FirstName: "Ada", LastName: "Lovelace",
	})
	if err != nil {
		t.Fatal(err)
	}
	publishAll(ctx, t, js, []events.Event{ev})
	is := newIssuer(t)
	tok := is.token(t, "read:persons", time.Hour)
	path := "/api/v1/persons/" + ev.Entity().ID

	var baseline string
	for _, delay := range []time.Duration{0, 3 * time.Second} {
		t.Run("delay "+delay.String(), func(t *testing.T) {
			cfg := lookupdConfig{network: nw, natsURL: "nats://nats:4222", jwks: is.jwks, env: map[string]string{
				"LOOKUP_SHUTDOWN_DELAY": delay.String(), "LOOKUP_SHUTDOWN_TIMEOUT": "10s",
			}}
			total, failed, examples := rollingUpdate(ctx, t, cfg, path, tok)
			t.Logf("delay %v: %d requests, %d failed %v", delay, total, failed, examples)
			if delay == 0 {
				baseline = fmt.Sprintf("%d of %d", failed, total)
				return
			}
			if total < 100 {
				t.Fatalf("only %d requests during the update: no load to speak of", total)
			}
			if failed != 0 {
				t.Errorf("%d of %d requests failed during the rolling update (baseline without delay: %s failed); first: %v",
					failed, total, baseline, examples)
			}
		})
	}
}

// rollingUpdate starts three replicas on cfg, loads them through a
// balancer, replaces each in turn and returns the requests sent, those
// that failed and a few of the failures.
func rollingUpdate(ctx context.Context, t *testing.T, cfg lookupdConfig, path, tok string) (total, failed int64, examples []string) {
	t.Helper()
	lb := &balancer{pollEvery: 100 * time.Millisecond}
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go lb.poll(pctx)
	front := httptest.NewServer(lb)
	defer front.Close()

	replicas := make([]*lookupd, 3)
	for i := range replicas {
		c := cfg
		c.volume = "lookupd-rolling-" + strconv.Itoa(i) + "-" + uuid.NewString()
		replicas[i] = startLookupd(ctx, t, c)
		replicas[i].waitReady(t)
		lb.add(replicas[i].api, replicas[i].admin)
	}
	eventually(t, 30*time.Second, "three replicas in rotation", func() error {
		if n := len(lb.ready()); n != 3 {
			return fmt.Errorf("%d ready", n)
		}
		return nil
	})

	var mu sync.Mutex
	var wg sync.WaitGroup
	loadCtx, stopLoad := context.WithCancel(ctx)
	for range 4 {
		wg.Go(func() {
			client := &http.Client{Timeout: 10 * time.Second}
			for loadCtx.Err() == nil {
				status, err := getStatus(client, front.URL+path, tok)
				atomic.AddInt64(&total, 1)
				if err != nil || status != http.StatusOK {
					atomic.AddInt64(&failed, 1)
					mu.Lock()
					if len(examples) < 3 {
						examples = append(examples, fmt.Sprintf("%d %v", status, err))
					}
					mu.Unlock()
				}
			}
		})
	}
	for _, l := range replicas {
		l.replace(ctx, t) // SIGTERM, wait for the exit, a new container on the volume
		l.waitReady(t)
		lb.add(l.api, l.admin)
		eventually(t, 30*time.Second, "the new replica in rotation", func() error {
			if n := len(lb.ready()); n != 3 {
				return fmt.Errorf("%d ready", n)
			}
			return nil
		})
	}
	stopLoad()
	wg.Wait()
	return total, failed, examples
}

// getStatus sends GET url with the bearer token through client and returns
// the status, the body read and discarded.
func getStatus(client *http.Client, url, tok string) (int, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, err
}
