package testkit

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// replica is a stand-in replica answering its name, ready or not.
func replica(t *testing.T, name string, ready bool) (api, admin string) {
	t.Helper()
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, name) }))
	t.Cleanup(a.Close)
	d := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !ready {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(d.Close)
	return a.URL, d.URL
}

func TestBalancerSendsOnlyToReadyReplicas(t *testing.T) {
	lb := NewBalancer(5 * time.Millisecond)
	front := httptest.NewServer(lb)
	defer front.Close()
	if got := get(t, front.URL); got != http.StatusServiceUnavailable {
		t.Errorf("no replica: status %d, want 503", got)
	}
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	go lb.Poll(ctx)
	lb.Add(replica(t, "ready", true))
	lb.Add(replica(t, "not ready", false))
	WaitFor(t, 10*time.Second, func() error {
		if n := lb.Ready(); n != 1 {
			return fmt.Errorf("%d replicas in rotation, want 1", n)
		}
		return nil
	})
	load := StartLoad(front.URL, "tok", 2)
	WaitFor(t, 10*time.Second, func() error {
		if n := load.total.Load(); n < 20 {
			return fmt.Errorf("%d requests sent", n)
		}
		return nil
	})
	total, failed, examples := load.Stop()
	if failed != 0 {
		t.Errorf("%d of %d requests failed (%v), want none: only the ready replica is in rotation", failed, total, examples)
	}
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.StatusCode
}
