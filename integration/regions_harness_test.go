//go:build integration

package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/events"
)

// twoRegions is the two-region set-up of deploy/ (docs/two-regions.md,
// deploy/compose/regions.yaml) on the secure NATS, with the secrets of
// deploy/gen-secrets.sh: region A's server "nats" on network netA
// (deploy/compose/nats-hub.conf with the users of deploy/nats/hub-auth.conf,
// JetStream domain hub, TLS with client certificates, store encrypted),
// region B's leaf node "nats-b" on netB (deploy/compose/nats-leaf.conf with
// the users of deploy/nats/auth.conf, domain b) and also on netA, where it
// dials region A as the user "leaf" over mutual TLS: that second network
// is the link. The streams are created as the compose stream jobs create
// them, as the user admin: PERSONS, PERSONS_DLQ and PERSONS_AUDIT in region
// A, the mirror (persons.mirror.json), PERSONS_DLQ and PERSONS_AUDIT in
// region B.
type twoRegions struct {
	s              *secrets
	netA, netB     string
	hub, leaf      *natsNode
	adminA, adminB jetstream.JetStream // the user admin in each region
	pubJS          jetstream.JetStream // the user publisher in region A
}

// startTwoRegions starts the two regions and returns once region B's
// mirror hears from region A.
func startTwoRegions(ctx context.Context, t *testing.T) *twoRegions {
	t.Helper()
	r := &twoRegions{s: genSecrets(t), netA: newNetwork(ctx, t), netB: newNetwork(ctx, t)}
	r.hub = r.startServer(ctx, t, r.netA, "nats", "../deploy/compose/nats-hub.conf", "../deploy/nats/hub-auth.conf", nil)
	r.leaf = r.startServer(ctx, t, r.netB, "nats-b", "../deploy/compose/nats-leaf.conf", "../deploy/nats/auth.conf",
		map[string]string{"NATS_LEAF_URL": r.leafURL(t)})
	dockerNetwork(t, "connect", r.netA, r.leaf.ctr, "nats-b")
	t.Cleanup(func() {
		if t.Failed() {
			dumpLogs(context.Background(), t, r.hub.ctr)
			dumpLogs(context.Background(), t, r.leaf.ctr)
		}
	})
	adminOpts := []nats.Option{nats.CustomInboxPrefix(adminInboxPrefix), nats.RetryOnFailedConnect(true)}
	_, _, r.adminA = jetStreamAs(t, r.s, []string{r.hub.url}, "admin", adminOpts...)
	_, _, r.adminB = jetStreamAs(t, r.s, []string{r.leaf.url}, "admin", adminOpts...)
	createStreams(ctx, t, r.adminA, "persons.json", "persons_dlq.json", "persons_audit.json")
	// The mirror is created once the link is up: a mirror created before
	// waits for its first request to region A to time out (30 s), then
	// backs off (10 s), before it copies anything.
	eventually(t, 60*time.Second, "region B's leaf node linked to region A", func() error {
		n, err := r.hub.leafNodes(ctx)
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("leaf nodes of region A: %d, want 1", n)
		}
		return nil
	})
	createStreams(ctx, t, r.adminB, "persons.mirror.json", "persons_dlq.json", "persons_audit.json")
	_, _, r.pubJS = jetStreamAs(t, r.s, []string{r.hub.url}, "publisher")
	eventually(t, 60*time.Second, "region B's mirror hearing from region A", func() error {
		m, err := r.mirror(ctx)
		if err != nil {
			return err
		}
		if m.Mirror == nil || m.Mirror.Active < 0 || m.Mirror.Active > 2*time.Second || m.Mirror.Error != nil {
			return fmt.Errorf("mirror %+v", m.Mirror)
		}
		return nil
	})
	return r
}

// startServer starts a nats-server of deploy/ in region network nw under
// alias: the configuration conf with the users auth, the server
// certificate, the hashes and JetStream key of nats.env and env. The one
// thing added to deploy's configuration: pings every 2 s (ping_max 3)
// instead of every 2 minutes, so that the leaf node finds its connection
// dead soon after the link is cut, and dials again as soon as it returns
// (a dead connection otherwise holds for minutes, docs/two-regions.md).
func (r *twoRegions) startServer(ctx context.Context, t *testing.T, nw, alias, conf, auth string, env map[string]string) *natsNode {
	t.Helper()
	files := append(r.s.serverFiles(conf, auth), testcontainers.ContainerFile{
		Reader:            strings.NewReader(fmt.Sprintf("include %s\nping_interval: \"2s\"\nping_max: 3\n", filepath.Base(conf))),
		ContainerFilePath: "/etc/nats/test.conf", FileMode: 0o644,
	})
	all := map[string]string{}
	for k, v := range r.s.env {
		all[k] = v
	}
	for k, v := range env {
		all[k] = v
	}
	n := startNATS(ctx, t, nw, alias, []string{"--config", "/etc/nats/test.conf"}, all, files)
	n.url = "tls://" + strings.TrimPrefix(n.url, "nats://")
	return n
}

// leafURL is NATS_LEAF_URL of leaf/leaf.env (gen-secrets.sh): region A's
// leaf node port with the user leaf's password.
func (r *twoRegions) leafURL(t *testing.T) string {
	t.Helper()
	f, err := os.Open(r.s.file("leaf", "leaf.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "NATS_LEAF_URL="); ok {
			return v
		}
	}
	t.Fatal("leaf/leaf.env has no NATS_LEAF_URL")
	return ""
}

// leafNodes returns the number of leaf nodes connected to n, from its
// monitoring endpoint /leafz.
func (n *natsNode) leafNodes(ctx context.Context) (int, error) {
	mon, err := n.ctr.PortEndpoint(ctx, "8222/tcp", "http")
	if err != nil {
		return 0, err
	}
	resp, err := http.Get(mon + "/leafz")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var leafz struct {
		Leafs int `json:"leafnodes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&leafz); err != nil {
		return 0, fmt.Errorf("leafz of %s: %w", n.name, err)
	}
	return leafz.Leafs, nil
}

// mirror returns the information of region B's PERSONS, the mirror.
func (r *twoRegions) mirror(ctx context.Context) (*jetstream.StreamInfo, error) {
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	s, err := r.adminB.Stream(cctx, "PERSONS")
	if err != nil {
		return nil, err
	}
	return s.CachedInfo(), nil
}

// cut disconnects region B's leaf node from region A's network; link
// connects it again.
func (r *twoRegions) cut(t *testing.T) { dockerNetwork(t, "disconnect", r.netA, r.leaf.ctr, "") }

func (r *twoRegions) link(t *testing.T) { dockerNetwork(t, "connect", r.netA, r.leaf.ctr, "nats-b") }

// lookupdA is the configuration of a replica in region A: the secure
// lookupd of secure.yaml reading PERSONS, the origin.
func (r *twoRegions) lookupdA(volume string, jwks []byte) lookupdConfig {
	return r.s.lookupdConfig(lookupdConfig{network: r.netA, natsURL: "tls://nats:4222", volume: volume, jwks: jwks,
		env: map[string]string{"LOOKUP_REPLICA_ID": "region-a"}})
}

// lookupdB is the configuration of a replica in region B, as lookupd-b of
// regions.yaml: the secure lookupd reading PERSONS, the mirror, with a
// staleness bound of 5 s and snapshots in region B's own bucket
// lookup-snapshots (on POST /snapshot with adminToken only).
func (r *twoRegions) lookupdB(volume, replica string, jwks []byte, adminToken string) lookupdConfig {
	return r.s.lookupdConfig(lookupdConfig{network: r.netB, natsURL: "tls://nats-b:4222", volume: volume, jwks: jwks,
		env: map[string]string{"LOOKUP_MAX_STALENESS": "5s", "LOOKUP_REPLICA_ID": replica,
			"LOOKUP_SNAPSHOT_BUCKET": "lookup-snapshots", "LOOKUP_SNAPSHOT_INTERVAL": "0s",
			"LOOKUP_ADMIN_TOKEN_FILE": "/etc/lookupd-admin-token"},
		files: []testcontainers.ContainerFile{
			{Reader: strings.NewReader(adminToken), ContainerFilePath: "/etc/lookupd-admin-token", FileMode: 0o444},
		}})
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

// entities are the people of TestTwoRegions and the versions published.
type entities struct {
	t        *testing.T
	business string
	ids      []string
	versions []uint64
}

// next returns the next event of person i, named name.
func (e *entities) next(i int, name string) events.Event {
	e.t.Helper()
	e.versions[i]++
	ev, err := events.NewEvent(testSource, e.versions[i], events.Consumer{ConsumerID: e.ids[i], BusinessID: e.business, FirstName: name, LastName: "Region"})
	if err != nil {
		e.t.Fatal(err)
	}
	return ev
}
