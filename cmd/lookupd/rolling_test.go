package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lookup/persons/internal/balancer"
	"github.com/lookup/persons/internal/wait"
)

// TestRollingRestart restarts three replicas one after the other, behind
// a balancer that follows /readyz, under a steady load: with a shutdown
// delay longer than the balancer takes to notice, no request fails. The
// same restart without a delay is measured as the baseline.
func TestRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("rolling restart of three replicas under load")
	}
	ns, js := personsNATS(t)
	consumer := adaConsumer(t, "rolling")
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
	lb := balancer.New(50 * time.Millisecond)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go lb.Poll(ctx)
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
		lb.Add("http://"+addrs["api"], "http://"+addrs["admin"])
	}
	for i := range dirs {
		dirs[i] = filepath.Join(t.TempDir(), "data")
		launch(i)
	}
	wait.For(t, 10*time.Second, func() error {
		if n := lb.Ready(); n != 3 {
			return fmt.Errorf("%d replicas in rotation, want 3", n)
		}
		return nil
	})

	load := balancer.StartLoad(front.URL+"/api/v1/persons/"+id, tok, 4)
	for i := range replicas {
		replicas[i].cancel() // SIGTERM
		if err := replicas[i].wait(t, 60*time.Second); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		launch(i)
	}
	return load.Stop()
}
