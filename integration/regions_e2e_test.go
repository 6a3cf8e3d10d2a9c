//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/events"
)

// regionConf is the configuration of a region's nats-server container:
// JetStream with a domain; the hub listens for leaf nodes, the leaf node
// connects to "hub"; pings every 2 s find a cut link soon (docs/two-regions.md, without the secure set-up's TLS
// and users: those are tested in process by TestTwoRegionPermissions).
func regionConf(domain, leafnodes string) []testcontainers.ContainerFile {
	conf := fmt.Sprintf("listen: 0.0.0.0:4222\nhttp: 0.0.0.0:8222\nserver_name: %s\nping_interval: \"2s\"\nping_max: 3\njetstream { domain: %s, store_dir: /data }\nleafnodes { %s }\n",
		domain, domain, leafnodes)
	return []testcontainers.ContainerFile{{Reader: bytes.NewReader([]byte(conf)), ContainerFilePath: "/etc/nats/nats.conf", FileMode: 0o644}}
}

// dockerNetwork connects (or disconnects) a container to a network: how
// the link between the regions is cut and restored.
func dockerNetwork(t *testing.T, verb, nw string, c testcontainers.Container, alias string) {
	t.Helper()
	args := []string{"network", verb, nw, c.GetContainerID()}
	if verb == "connect" && alias != "" {
		args = []string{"network", "connect", "--alias", alias, nw, c.GetContainerID()}
	}
	if out, err := exec.Command("docker", args...).CombinedOutput(); err != nil {
		t.Fatalf("docker %v: %v\n%s", args, err, out)
	}
}

// getBody GETs url with a token and returns the status and body.
func getBody(url, tok string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// TestTwoRegions: region A (a hub nats-server, domain hub, PERSONS, a
// replica) and region B (a leaf node, domain b, PERSONS mirroring A's
// through the domain, a replica with LOOKUP_MAX_STALENESS=5s), on two
// networks, the leaf node on both (the link).
//
//   - 1,000 publishes in A, each read at once in B with Lookup-Min-Position:
//     never anything but 200 with the write; the wait is reported.
//   - The link cut for 30 s while A keeps publishing: B answers what it
//     has; a position it has not received answers 503; B turns not ready
//     after the bound, counted from the mirror's last heartbeat.
//   - The link back: B ready and caught up (each entity equal to A's)
//     within 5 s of its mirror holding A's last sequence.
func TestTwoRegions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	netA, netB := newNetwork(ctx, t), newNetwork(ctx, t)
	cmd := []string{"--config", "/etc/nats/nats.conf"}
	hub := startNATS(ctx, t, netA, "hub", cmd, nil, regionConf("hub", "listen: 0.0.0.0:7422"))
	leaf := startNATS(ctx, t, netB, "leaf", cmd, nil, regionConf("b", `reconnect: "1s", remotes: [ { url: "nats://hub:7422" } ]`))
	dockerNetwork(t, "connect", netA, leaf.ctr, "leaf")
	jsA, jsB := connectJS(t, hub.url), connectJS(t, leaf.url)
	createStreams(ctx, t, jsA, "persons.json", "persons_dlq.json")
	createStreams(ctx, t, jsB, "persons.mirror.json", "persons_dlq.json")
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(context.Background(), t, leaf.ctr)
		}
	})
	eventually(t, 60*time.Second, "region B's mirror hearing from region A", func() error {
		s, err := jsB.Stream(ctx, "PERSONS")
		if err != nil {
			return err
		}
		if m := s.CachedInfo().Mirror; m == nil || m.Active < 0 || m.Active > 2*time.Second || m.Error != nil {
			return fmt.Errorf("mirror %+v", m)
		}
		return nil
	})

	is := newIssuer(t)
	a := startLookupd(ctx, t, lookupdConfig{network: netA, natsURL: "nats://hub:4222",
		volume: "lookupd-region-a-" + uuid.NewString(), jwks: is.jwks})
	b := startLookupd(ctx, t, lookupdConfig{network: netB, natsURL: "nats://leaf:4222",
		volume: "lookupd-region-b-" + uuid.NewString(), jwks: is.jwks,
		env: map[string]string{"LOOKUP_MAX_STALENESS": "5s", "LOOKUP_REPLICA_ID": "region-b"}})
	a.waitReady(t)
	b.waitReady(t)
	tok := is.token(t, "read:persons", time.Hour)
	pub := events.NewPublisher(jsA)
	business := uuid.NewString()
	ids := make([]string, 50)
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	versions := make([]uint64, len(ids))
	next := func(i int, name string) events.Event {
		t.Helper()
		versions[i]++
		ev, err := events.NewEvent(testSource, versions[i], events.Consumer{ConsumerID: ids[i], BusinessID: business, FirstName: name, LastName: "Region"})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}

	// Read your writes across regions.
	waits := make([]time.Duration, 0, 1000)
	for i := range 1000 {
		name := fmt.Sprintf("W%d", i)
		seq, err := pub.Publish(ctx, next(i%len(ids), name))
		if err != nil {
			t.Fatalf("publish %d in region A: %v", i, err)
		}
		start := time.Now()
		status, first, pos, err := getAtPosition(b.api+"/api/v1/persons/"+ids[i%len(ids)], tok, seq)
		waits = append(waits, time.Since(start))
		if err != nil || status != http.StatusOK || first != name {
			t.Fatalf("read %d in region B at sequence %d: %d %q (Lookup-Position %s), %v; want 200 %q", i, seq, status, first, pos, err, name)
		}
	}
	slices.Sort(waits)
	t.Logf("1,000 writes in region A read in region B with Lookup-Min-Position: p50 %v, p99 %v, max %v (GET included)",
		waits[len(waits)/2].Round(time.Microsecond), waits[len(waits)*99/100].Round(time.Microsecond), waits[len(waits)-1].Round(time.Microsecond))

	// The link cut for 30 s while region A goes on publishing.
	dockerNetwork(t, "disconnect", netA, leaf.ctr, "")
	cut := time.Now()
	pctx, stopPublishing := context.WithCancel(ctx)
	var published atomic.Int64
	var lastSeq atomic.Uint64
	done := make(chan struct{})
	go func() { // only this goroutine calls next from here on
		defer close(done)
		for i := 0; pctx.Err() == nil; i++ {
			seq, err := pub.Publish(pctx, next(i%len(ids), fmt.Sprintf("C%d", i)))
			if err == nil {
				published.Add(1)
				lastSeq.Store(seq)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	eventually(t, 10*time.Second, "a write published in region A after the cut", func() error {
		if lastSeq.Load() == 0 {
			return fmt.Errorf("nothing published yet")
		}
		return nil
	})
	if status, _, _, err := getAtPosition(b.api+"/api/v1/persons/"+ids[0], tok, lastSeq.Load()); err != nil || status != http.StatusServiceUnavailable {
		t.Errorf("region B, cut off, asked for sequence %d: %d, %v; want 503", lastSeq.Load(), status, err)
	}
	if status, _, err := getBody(b.api+"/api/v1/persons/"+ids[1], tok); err != nil || (status != http.StatusOK && time.Since(cut) < 5*time.Second) {
		t.Errorf("region B, cut off %v ago, without a position: %d, %v; want its last state", time.Since(cut).Round(time.Millisecond), status, err)
	}
	eventually(t, 25*time.Second, "region B not ready once cut off beyond the bound", func() error {
		return expectStatus(b.admin+"/readyz", http.StatusServiceUnavailable)
	})
	notReady := time.Since(cut)
	t.Logf("region B not ready %v after the link was cut (bound 5s)", notReady.Round(time.Millisecond))
	// The bound counts from the mirror's last heartbeat from region A (one
	// a second), up to a second before the cut.
	if notReady < 4*time.Second {
		t.Errorf("region B not ready %v after the cut, before the 5s bound (less its heartbeat)", notReady)
	}
	if err := expectStatus(a.admin+"/readyz", http.StatusOK); err != nil {
		t.Errorf("region A during the cut: %v", err)
	}
	time.Sleep(time.Until(cut.Add(30 * time.Second))) // the duration under test
	dockerNetwork(t, "connect", netA, leaf.ctr, "leaf")
	relinked := time.Now()
	stopPublishing()
	<-done
	last := lastSeq.Load()
	t.Logf("%d events published in region A during the cut, up to sequence %d", published.Load(), last)

	var mirrored time.Time
	eventually(t, 60*time.Second, "region B's mirror holding region A's last sequence", func() error {
		s, err := jsB.Stream(ctx, "PERSONS")
		if err != nil {
			return err
		}
		if got := s.CachedInfo().State.LastSeq; got < last {
			return fmt.Errorf("mirror at %d, want %d", got, last)
		}
		mirrored = time.Now()
		return nil
	})
	eventually(t, 30*time.Second, "region B ready and caught up", func() error {
		if err := expectStatus(b.admin+"/readyz", http.StatusOK); err != nil {
			return err
		}
		status, _, pos, err := getAtPosition(b.api+"/api/v1/persons/"+ids[0], tok, last)
		if err != nil || status != http.StatusOK {
			return fmt.Errorf("at %d: %d (Lookup-Position %s) %w", last, status, pos, err)
		}
		return nil
	})
	back := time.Since(mirrored)
	t.Logf("link back: mirror caught up %v after the link, region B ready and caught up %v after its mirror",
		mirrored.Sub(relinked).Round(time.Millisecond), back.Round(time.Millisecond))
	if back > 5*time.Second {
		t.Errorf("region B caught up %v after its mirror, want within 5s", back)
	}
	a.waitApplied(t, last, 30*time.Second)
	for _, id := range ids {
		sa, ba, erra := getBody(a.api+"/api/v1/persons/"+id, tok)
		sb, bb, errb := getBody(b.api+"/api/v1/persons/"+id, tok)
		if erra != nil || errb != nil || sa != http.StatusOK || sa != sb || !bytes.Equal(ba, bb) {
			t.Errorf("person %s: region A %d %s %v, region B %d %s %v; want equal", id, sa, ba, erra, sb, bb, errb)
		}
	}
}
