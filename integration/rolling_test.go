//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

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
	lb := testkit.NewBalancer(100 * time.Millisecond)
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go lb.Poll(pctx)
	front := httptest.NewServer(lb)
	defer front.Close()

	replicas := make([]*lookupd, 3)
	for i := range replicas {
		c := cfg
		c.volume = "lookupd-rolling-" + strconv.Itoa(i) + "-" + uuid.NewString()
		replicas[i] = startLookupd(ctx, t, c)
		replicas[i].waitReady(t)
		lb.Add(replicas[i].api, replicas[i].admin)
	}
	inRotation := func(what string) {
		eventually(t, 30*time.Second, what, func() error {
			if n := lb.Ready(); n != 3 {
				return fmt.Errorf("%d ready", n)
			}
			return nil
		})
	}
	inRotation("three replicas in rotation")

	load := testkit.StartLoad(front.URL+path, tok, 4)
	for _, l := range replicas {
		l.replace(ctx, t) // SIGTERM, wait for the exit, a new container on the volume
		l.waitReady(t)
		lb.Add(l.api, l.admin)
		inRotation("the new replica in rotation")
	}
	return load.Stop()
}
