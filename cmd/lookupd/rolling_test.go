package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/wait"
)

// balancer is a load balancer as a Kubernetes Service behaves: it learns
// of replicas when they start, polls their /readyz every pollEvery and
// sends requests, round robin, only to those that answered 200 last time.
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

func (b *balancer) add(api, admin string) {
	u, _ := url.Parse("http://" + api)
	p := httputil.NewSingleHostReverseProxy(u)
	p.ErrorLog = log.New(io.Discard, "", 0) // failures are counted by the load
	b.mu.Lock()
	b.backends = append(b.backends, &backend{admin: "http://" + admin, proxy: p})
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

// readyCount returns the number of backends in rotation.
func (b *balancer) readyCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, be := range b.backends {
		if be.ready.Load() {
			n++
		}
	}
	return n
}

func (b *balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	var ready []*backend
	for _, be := range b.backends {
		if be.ready.Load() {
			ready = append(ready, be)
		}
	}
	b.mu.Unlock()
	if len(ready) == 0 {
		http.Error(w, "no ready backend", http.StatusServiceUnavailable)
		return
	}
	ready[b.next.Add(1)%uint64(len(ready))].proxy.ServeHTTP(w, r)
}

// TestRollingRestart restarts three replicas one after the other, behind
// a balancer that follows /readyz, under a steady load: with a shutdown
// delay longer than the balancer takes to notice, no request fails. The
// same restart without a delay is measured as the baseline.
func TestRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("rolling restart of three replicas under load")
	}
	ns := runNATS(t)
	js := jetStream(t, ns)
	createStream(t, js, "PERSONS")
	demo, err := newDemoData()
	if err != nil {
		t.Fatal(err)
	}
	consumer := events.Consumer{ConsumerID: demoID("rolling", 0), BusinessID: demo.Businesses[0], FirstName: "Ada", LastName: "Lovelace"}
	publish(t, js, consumer)
	tok := token(t, tokenRequest{Issuer: testIssuer, Audience: testAudience})

	var baseline int64
	for _, tt := range []struct {
		name  string
		delay time.Duration
	}{
		{"no delay (baseline)", 0},
		{"shutdown delay", time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			total, failed, examples := rollingRestart(t, ns, tt.delay, consumer.ConsumerID, tok)
			t.Logf("delay %v: %d requests, %d failed %v", tt.delay, total, failed, examples)
			if tt.delay == 0 {
				baseline = failed
				return
			}
			if total < 100 {
				t.Fatalf("only %d requests during the restart: no load to speak of", total)
			}
			if failed != 0 {
				t.Errorf("%d of %d requests failed during the rolling restart (baseline without delay: %d); first: %v", failed, total, baseline, examples)
			}
		})
	}
}

// rollingRestart starts three replicas with the shutdown delay, puts load
// on them through a balancer, restarts each in turn on its data directory
// and returns the requests sent, those that failed and a few failures.
func rollingRestart(t *testing.T, ns *server.Server, delay time.Duration, id, tok string) (total, failed int64, examples []string) {
	t.Helper()
	lb := &balancer{pollEvery: 50 * time.Millisecond}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go lb.poll(ctx)
	front := httptest.NewServer(lb)
	defer front.Close()

	dirs := make([]string, 3)
	replicas := make([]*program, 3)
	launch := func(i int) {
		environ := serveEnv(t, ns, dirs[i])
		environ["LOOKUP_SHUTDOWN_DELAY"] = delay.String()
		replicas[i] = start(t, environ, "serve")
		addrs := replicas[i].addrs(t)
		waitReady(t, addrs["admin"])
		lb.add(addrs["api"], addrs["admin"])
	}
	for i := range dirs {
		dirs[i] = filepath.Join(t.TempDir(), "data")
		launch(i)
	}
	wait.For(t, 10*time.Second, func() error {
		if n := lb.readyCount(); n != 3 {
			return fmt.Errorf("%d replicas in rotation, want 3", n)
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
				code, _, err := getWith(client, front.URL+"/api/v1/persons/"+id, tok)
				atomic.AddInt64(&total, 1)
				if err != nil || code != http.StatusOK {
					atomic.AddInt64(&failed, 1)
					mu.Lock()
					if len(examples) < 3 {
						examples = append(examples, fmt.Sprintf("%d %v", code, err))
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range replicas {
		replicas[i].cancel() // SIGTERM
		if err := replicas[i].wait(t, 60*time.Second); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		launch(i)
	}
	stopLoad()
	wg.Wait()
	return total, failed, examples
}

// getWith is get through client.
func getWith(client *http.Client, url, tok string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
