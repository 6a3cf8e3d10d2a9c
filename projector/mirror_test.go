package projector

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
)

// twoRegions is an origin region (a hub nats-server, JetStream domain
// "hub", holding PERSONS) and a second region (a leaf node of it, domain
// "leaf", holding PERSONS_B, a mirror of PERSONS reached through the hub's
// domain): the topology of docs/two-regions.md in one process.
type twoRegions struct {
	hubOpts *server.Options
	hub     *server.Server
	hubJS   jetstream.JetStream // publishers, region A
	leafJS  jetstream.JetStream // the region B replica
}

func startRegions(t *testing.T) *twoRegions {
	t.Helper()
	r := &twoRegions{hubOpts: testkit.NATSOptions(t.TempDir())}
	r.hubOpts.ServerName, r.hubOpts.JetStreamDomain = "hub", "hub"
	r.hubOpts.LeafNode.Host, r.hubOpts.LeafNode.Port = "127.0.0.1", -1
	r.hub = testkit.RunNATS(t, r.hubOpts)
	r.hubJS = connect(t, r.hub.ClientURL())
	createStream(t, r.hubJS)

	leafOpts := testkit.NATSOptions(t.TempDir())
	leafOpts.ServerName, leafOpts.JetStreamDomain = "leaf", "leaf"
	u, err := url.Parse(fmt.Sprintf("nats://127.0.0.1:%d", r.hubOpts.LeafNode.Port))
	if err != nil {
		t.Fatal(err)
	}
	leafOpts.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}}}
	leafOpts.LeafNode.ReconnectInterval = 100 * time.Millisecond
	leaf := testkit.RunNATS(t, leafOpts)
	r.leafJS = connect(t, leaf.ClientURL())
	testkit.WaitFor(t, 10*time.Second, func() error {
		if n := r.hub.NumLeafNodes(); n != 1 {
			return fmt.Errorf("leaf nodes connected to the hub: %d", n)
		}
		return nil
	})
	createMirror(t, r.leafJS, "PERSONS_B", &jetstream.StreamSource{Name: "PERSONS",
		External: &jetstream.ExternalStream{APIPrefix: "$JS.hub.API"}})
	return r
}

// createMirror creates the stream name mirroring src.
func createMirror(t *testing.T, js jetstream.JetStream, name string, src *jetstream.StreamSource) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Mirror: src, Storage: jetstream.FileStorage}); err != nil {
		t.Fatalf("create mirror %s of %s: %v", name, src.Name, err)
	}
}

// waitMirrored waits until stream name of js holds sequence seq.
func waitMirrored(t *testing.T, js jetstream.JetStream, name string, seq uint64) {
	t.Helper()
	testkit.WaitFor(t, 20*time.Second, func() error {
		s, err := js.Stream(t.Context(), name)
		if err != nil {
			return err
		}
		if last := s.CachedInfo().State.LastSeq; last < seq {
			return fmt.Errorf("%s last sequence %d, want %d", name, last, seq)
		}
		return nil
	})
}

// TestMirrorCutOff: a replica projecting from a mirror sees the mirror's
// own loss of its origin. With the origin gone, Progress reports the
// mirror cut off since (about) when it last heard from it, and
// UnreachableSince (what the staleness bound reads) goes past a bound
// while the replica still reaches its mirror and keeps its data; a
// position the mirror has not received is not reached. With the origin
// back, the replica catches up without anything done and is in step.
func TestMirrorCutOff(t *testing.T) {
	r := startRegions(t)
	publishAll(t, r.hubJS, consumerMsgs(t, 5))
	waitMirrored(t, r.leafJS, "PERSONS_B", 5)

	s := openStore(t, t.TempDir(), StoreOptions{})
	p := New(r.leafJS, s, Config{Stream: "PERSONS_B", RefreshInterval: 100 * time.Millisecond})
	stop := runProjector(t, p)
	waitApplied(t, p, 5, 20*time.Second)
	testkit.WaitFor(t, 10*time.Second, func() error {
		pr := p.Progress()
		if pr.MirrorOf != "PERSONS" || !pr.MirrorCutOffSince.IsZero() || !pr.UnreachableSince.IsZero() {
			return fmt.Errorf("linked: MirrorOf %q, MirrorCutOffSince %v, UnreachableSince %v; want PERSONS, zero, zero",
				pr.MirrorOf, pr.MirrorCutOffSince, pr.UnreachableSince)
		}
		return nil
	})

	cut := time.Now()
	r.hub.Shutdown()
	r.hub.WaitForShutdown()
	const bound = time.Second
	testkit.WaitFor(t, 15*time.Second, func() error {
		pr := p.Progress()
		switch {
		case pr.MirrorCutOffSince.IsZero():
			return fmt.Errorf("mirror not seen cut off: %+v", pr)
		case !pr.UnreachableSince.Equal(pr.MirrorCutOffSince):
			return fmt.Errorf("UnreachableSince %v, want the mirror's cut-off %v", pr.UnreachableSince, pr.MirrorCutOffSince)
		case time.Since(pr.UnreachableSince) <= bound:
			return fmt.Errorf("cut off for %v, not yet beyond the bound %v", time.Since(pr.UnreachableSince), bound)
		}
		return nil
	})
	pr := p.Progress()
	// The cut-off dates from the last heartbeat the mirror had (one a
	// second), not from when the projector noticed.
	if pr.MirrorCutOffSince.Before(cut.Add(-2*time.Second)) || pr.MirrorCutOffSince.After(cut.Add(mirrorGrace)) {
		t.Errorf("MirrorCutOffSince %v, want within [%v, %v]", pr.MirrorCutOffSince, cut.Add(-2*time.Second), cut.Add(mirrorGrace))
	}
	if !pr.Connected || pr.AppliedSeq != 5 {
		t.Errorf("cut off: Connected %v, AppliedSeq %d; want the mirror still reached and its 5 events kept", pr.Connected, pr.AppliedSeq)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	if err := p.Position().Wait(ctx, 6); err == nil {
		t.Error("Wait(6) returned nil while the mirror is cut off at 5")
	}
	cancel()

	// The link back: the same hub, same store and ports; more events.
	opts := *r.hubOpts
	opts.Port, opts.LeafNode.Port = r.hubOpts.Port, r.hubOpts.LeafNode.Port
	hub := testkit.RunNATS(t, &opts)
	hubJS := connect(t, hub.ClientURL())
	publishAll(t, hubJS, consumerMsgs(t, 5))
	waitApplied(t, p, 10, 30*time.Second)
	testkit.WaitFor(t, 20*time.Second, func() error {
		pr := p.Progress()
		if !pr.MirrorCutOffSince.IsZero() || !pr.UnreachableSince.IsZero() || !pr.OldestUnappliedTime.IsZero() {
			return fmt.Errorf("after the link returned: %+v; want in step", pr)
		}
		return nil
	})
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}
