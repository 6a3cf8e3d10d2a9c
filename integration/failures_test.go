//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/events"
)

// consumers returns n upserts of n distinct consumers, and their ids.
func consumers(t *testing.T, n int) ([]events.Event, []string) {
	t.Helper()
	evs := make([]events.Event, 0, n)
	ids := make([]string, 0, n)
	business := uuid.NewString()
	for i := range n {
		id := uuid.NewString()
		ev, err := events.NewEvent(testSource, 1, events.Consumer{
			ConsumerID: id, BusinessID: business, FirstName: fmt.Sprintf("First%d", i), LastName: "Flow",
		})
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, ev)
		ids = append(ids, id)
	}
	return evs, ids
}

// flow publishes evs in the background, paced, retrying each until acked.
// It publishes only while fewer than limit events are acked, so a test
// decides how many events flow across each failure it injects instead of
// racing the publisher.
type flow struct {
	acked atomic.Int64
	limit atomic.Int64
	done  chan struct{}
	last  uint64
	err   error
}

func startFlow(ctx context.Context, js jetstream.JetStream, evs []events.Event, pace time.Duration, limit int64) *flow {
	f := &flow{done: make(chan struct{})}
	f.limit.Store(limit)
	go func() {
		defer close(f.done)
		f.last, f.err = publishRetrying(ctx, events.NewPublisher(js), evs, pace, func(n int) {
			f.acked.Store(int64(n))
			for int64(n) >= f.limit.Load() && n < len(evs) && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond) // polls the limit
			}
		})
	}()
	return f
}

// allow lets the flow go on until n events are acked.
func (f *flow) allow(n int64) { f.limit.Store(n) }

// wait waits for the flow to end and returns its last sequence.
func (f *flow) wait(t *testing.T, timeout time.Duration) uint64 {
	t.Helper()
	select {
	case <-f.done:
	case <-time.After(timeout):
		t.Fatalf("publisher did not finish within %v (%d acked)", timeout, f.acked.Load())
	}
	if f.err != nil {
		t.Fatalf("publisher: %v", f.err)
	}
	return f.last
}

// waitAcked polls until at least n events of the flow are acknowledged.
func (f *flow) waitAcked(t *testing.T, n int64) {
	t.Helper()
	eventually(t, 60*time.Second, fmt.Sprintf("%d events acked", n), func() error {
		if got := f.acked.Load(); got < n {
			return fmt.Errorf("%d acked", got)
		}
		return nil
	})
}

// checkAllProjected asserts that every event of the flow was applied once
// and every consumer answers.
func checkAllProjected(t *testing.T, ld *lookupd, is *issuer, last uint64, ids []string) {
	t.Helper()
	ld.waitApplied(t, last, 90*time.Second)
	if got := ld.metric(t, "lookup_projector_events_applied_total"); got != float64(len(ids)) {
		t.Errorf("applied: got %v, want %d (each event once)", got, len(ids))
	}
	tok := is.token(t, "read:persons", time.Hour)
	missing := 0
	for _, id := range ids {
		if r := get(t, ld.api, "/api/v1/persons/"+id, tok); r.status != http.StatusOK {
			missing++
			if missing <= 3 {
				t.Errorf("person %s: got %d, want 200: %s", id, r.status, r.body)
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d persons missing from the read model", missing, len(ids))
	}
}

// TestNATSRestart stops and starts the NATS container while events are being
// published: lookupd recovers and every event ends up in the read model.
func TestNATSRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nw, nn, js := singleNATS(ctx, t)
	is := newIssuer(t)
	ld := startLookupd(ctx, t, lookupdConfig{network: nw, natsURL: "nats://nats:4222", volume: "lookupd-natsrestart-" + uuid.NewString(), jwks: is.jwks})
	ld.waitReady(t)

	const n = 400
	evs, ids := consumers(t, n)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	fl := startFlow(pctx, js, evs, 10*time.Millisecond, n/4)
	fl.waitAcked(t, n/4)

	fl.allow(n / 2) // events in flight while NATS stops
	nn.stop(ctx, t)
	eventually(t, 30*time.Second, "lookupd sees NATS gone", func() error {
		v, err := scrape(ld.admin+"/metrics", "lookup_projector_connected")
		if err != nil {
			return err
		}
		if v != 0 {
			return fmt.Errorf("connected %v", v)
		}
		return nil
	})
	if got := fl.acked.Load(); got >= n {
		t.Fatalf("all %d events were acked before NATS stopped: the test proves nothing; slow the publisher", got)
	}
	t.Logf("NATS stopped after %d of %d events acked", fl.acked.Load(), n)
	fl.allow(n) // the next event is published, retried, across the outage
	nn.start(ctx, t)

	last := fl.wait(t, 5*time.Minute)
	checkAllProjected(t, ld, is, last, ids)
	stream, err := js.Stream(ctx, "PERSONS")
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	if info.State.Msgs != n {
		t.Errorf("stream holds %d messages, want %d (retries must be deduplicated)", info.State.Msgs, n)
	}
}

// TestNATSCluster runs a three-node NATS cluster (testdata/nats-open-cluster.conf)
// with the streams replicated three times (deploy/streams/*.r3.json). While
// events flow it stops the node lookupd is connected to, checks that
// projection goes on, starts it again, then stops the PERSONS stream leader:
// projection goes on and nothing is lost.
func TestNATSCluster(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nw := newNetwork(ctx, t)
	nodes := make([]*natsNode, 3)
	byName := map[string]*natsNode{}
	var urls, inner []string
	for i := range nodes {
		name := fmt.Sprintf("nats-%d", i)
		nodes[i] = startNATS(ctx, t, nw, name+".nats", []string{"--config", "/etc/nats/nats.conf"},
			map[string]string{"SERVER_NAME": name},
			[]testcontainers.ContainerFile{{HostFilePath: "testdata/nats-open-cluster.conf", ContainerFilePath: "/etc/nats/nats.conf", FileMode: 0o644}})
		byName[name] = nodes[i]
		urls = append(urls, nodes[i].url)
		inner = append(inner, "nats://"+name+".nats:4222")
	}
	js := connectJS(t, urls...)
	createStreams(ctx, t, js, "persons.r3.json", "persons_dlq.r3.json")

	stream, err := js.Stream(ctx, "PERSONS")
	if err != nil {
		t.Fatalf("stream: %v", err)
	}
	// leader waits until PERSONS has a leader and two current replicas.
	leader := func(what string) string {
		t.Helper()
		var l string
		eventually(t, 60*time.Second, what, func() error {
			info, err := stream.Info(ctx)
			if err != nil {
				return err
			}
			if info.Config.Replicas != 3 || info.Cluster == nil || info.Cluster.Leader == "" || len(info.Cluster.Replicas) != 2 {
				return fmt.Errorf("replicas %d, cluster %+v", info.Config.Replicas, info.Cluster)
			}
			for _, r := range info.Cluster.Replicas {
				if !r.Current || r.Offline {
					return fmt.Errorf("replica %s not current", r.Name)
				}
			}
			l = info.Cluster.Leader
			return nil
		})
		return l
	}
	leader("PERSONS replicated on three nodes")

	is := newIssuer(t)
	ld := startLookupd(ctx, t, lookupdConfig{network: nw, natsURL: strings.Join(inner, ","), volume: "lookupd-cluster-" + uuid.NewString(), jwks: is.jwks})
	ld.waitReady(t)
	var client *natsNode
	eventually(t, 30*time.Second, "the node lookupd is connected to", func() error {
		for _, nd := range nodes {
			names, err := nd.connectionNames(ctx)
			if err != nil {
				return err
			}
			for _, name := range names {
				if name == "lookupd" {
					client = nd
					return nil
				}
			}
		}
		return fmt.Errorf("no node lists a connection named lookupd")
	})

	const n = 800
	evs, ids := consumers(t, n)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	fl := startFlow(pctx, js, evs, 10*time.Millisecond, n/8)

	// stop stops nd while events still flow, then waits until lookupd has
	// applied 50 more events (or all of them) with nd down.
	stop := func(nd *natsNode, what string) {
		t.Helper()
		from := uint64(ld.metric(t, "lookup_projector_applied_sequence"))
		fl.allow(fl.acked.Load() + n/8) // events in flight while nd stops
		nd.stop(ctx, t)
		acked := fl.acked.Load()
		if acked >= n {
			t.Fatalf("all %d events were acked before %s stopped: the test proves nothing; slow the publisher", acked, nd.name)
		}
		fl.allow(acked + n/4) // and while it is down
		t.Logf("stopped %s (%s) after %d of %d events acked, %d applied", nd.name, what, acked, n, from)
		ld.waitApplied(t, min(from+50, n), 90*time.Second)
	}

	fl.waitAcked(t, n/8)
	stop(client, "the node lookupd is connected to")
	client.start(ctx, t)
	stopped := leader("PERSONS recovered its three replicas")
	stop(byName[stopped], "the PERSONS stream leader")

	fl.allow(n)
	last := fl.wait(t, 5*time.Minute)
	checkAllProjected(t, ld, is, last, ids)
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatalf("stream info: %v", err)
	}
	if info.Cluster == nil || info.Cluster.Leader == "" || info.Cluster.Leader == stopped {
		t.Errorf("after stopping %s: want a new leader, got %+v", stopped, info.Cluster)
	}
	if info.State.Msgs != n {
		t.Errorf("stream holds %d messages, want %d (retries must be deduplicated)", info.State.Msgs, n)
	}
}
