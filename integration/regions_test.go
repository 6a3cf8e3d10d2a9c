package integration

// Unit tests (no build tag, run by `make test`) of the two-region set-up
// (docs/two-regions.md): its files are kept in step with the single-region
// ones they extend, and its NATS permissions, run in process, let region
// B's lookupd project from its mirror and nothing more.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/conf"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/crypto/bcrypt"

	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// TestMirrorStreamFiles keeps region B's mirror (persons.mirror.json,
// persons.mirror.r3.json) equal to PERSONS but for what makes it a mirror:
// no subjects, the mirror of PERSONS through the origin's domain, its
// description; and the R1 and R3 files equal but for num_replicas.
func TestMirrorStreamFiles(t *testing.T) {
	for _, pair := range [][2]string{{"persons.json", "persons.mirror.json"}, {"persons.r3.json", "persons.mirror.r3.json"}} {
		t.Run(pair[1], func(t *testing.T) {
			origin, mirror := loadStreamConfig(t, pair[0]), loadStreamConfig(t, pair[1])
			m := mirror.Mirror
			if m == nil || m.Name != origin.Name || m.External == nil || m.External.APIPrefix != "$JS.hub.API" ||
				m.FilterSubject != "" || len(m.SubjectTransforms) != 0 || len(mirror.Subjects) != 0 {
				t.Fatalf("%s: mirror %+v, subjects %v; want a whole mirror of %s through $JS.hub.API, no subjects", pair[1], m, mirror.Subjects, origin.Name)
			}
			mirror.Mirror, mirror.Subjects, mirror.Description = nil, origin.Subjects, origin.Description
			a, _ := json.Marshal(origin)
			b, _ := json.Marshal(mirror)
			if string(a) != string(b) {
				t.Errorf("%s and %s differ beyond the mirror:\n%s\n%s", pair[0], pair[1], a, b)
			}
		})
	}
	r1, r3 := loadStreamConfig(t, "persons.mirror.json"), loadStreamConfig(t, "persons.mirror.r3.json")
	r3.Replicas = r1.Replicas
	a, _ := json.Marshal(r1)
	b, _ := json.Marshal(r3)
	if string(a) != string(b) {
		t.Errorf("persons.mirror.json and persons.mirror.r3.json differ beyond num_replicas:\n%s\n%s", a, b)
	}
}

// readDeploy returns deploy/<rel>.
func readDeploy(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "deploy", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// confLines returns the configuration lines of a nats-server file: without
// comment lines, blank lines and the lines marked drop (removed whole), and
// without trailing comments.
func confLines(text string, drop func(line string) bool) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") || (drop != nil && drop(line)) {
			continue
		}
		if i := strings.Index(line, " #"); i >= 0 {
			line = strings.TrimRight(line[:i], " ")
		}
		out = append(out, line)
	}
	return out
}

// TestRegionFilesInStep: the origin's files of the two-region overlay are
// the single-region ones plus what the second region needs, nothing
// changed: deploy/nats/hub-auth.conf is auth.conf with the user "leaf", and
// deploy/compose/nats-hub.conf and deploy/k8s/regions/hub.conf are
// deploy/compose/nats.conf and deploy/k8s/nats/nats.conf with a JetStream
// domain and the leaf node port, and deploy/k8s/regions/leaf.conf is
// deploy/k8s/nats/nats.conf with a domain and the link to region A.
func TestRegionFilesInStep(t *testing.T) {
	t.Run("hub-auth.conf", func(t *testing.T) {
		hub := readDeploy(t, "nats/hub-auth.conf")
		start := strings.Index(hub, "# --- region B's leaf node")
		end := strings.Index(hub, "# --- end of region B's leaf node ---")
		if start < 0 || end < start {
			t.Fatal("hub-auth.conf does not mark region B's leaf node user")
		}
		block := hub[start:end]
		got := confLines(hub[:start]+hub[end:], nil)
		want := confLines(readDeploy(t, "nats/auth.conf"), nil)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("hub-auth.conf differs from auth.conf beyond the leaf user:\n%s\n---\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if !strings.Contains(block, "user: leaf") || strings.Contains(block, `"persons.>"`) || strings.Contains(block, `">"`) {
			t.Errorf("the leaf user's block gives more than the mirror needs:\n%s", block)
		}
	})
	twoRegions := func(line string) bool {
		return strings.Contains(line, "# two regions") && !strings.Contains(line, "include")
	}
	for _, tc := range []struct{ file, base string }{
		{"compose/nats-hub.conf", "compose/nats.conf"},
		{"k8s/regions/hub.conf", "k8s/nats/nats.conf"},
		{"k8s/regions/leaf.conf", "k8s/nats/nats.conf"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := confLines(readDeploy(t, tc.file), twoRegions)
			want := confLines(readDeploy(t, tc.base), nil)
			for i, l := range got {
				got[i] = strings.Replace(l, "include hub-auth.conf", "include auth.conf", 1)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s differs from %s beyond the lines marked \"two regions\":\n%s\n---\n%s",
					tc.file, tc.base, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

// TestRegionConfigsParse: the two-region server configurations are valid
// nats-server syntax, with the domains the mirror definition names.
func TestRegionConfigsParse(t *testing.T) {
	t.Setenv("JS_KEY", "k")
	t.Setenv("SERVER_NAME", "nats-0")
	t.Setenv("NATS_LEAF_URL", "tls://leaf:p@nats:7422")
	for _, tc := range []struct{ file, domain string }{
		{"compose/nats-hub.conf", "hub"},
		{"compose/nats-leaf.conf", "b"},
		{"k8s/regions/hub.conf", "hub"},
		{"k8s/regions/leaf.conf", "b"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			// Parsed without its include (auth.conf is checked by running it below).
			text := regexp.MustCompile(`(?m)^include .*$`).ReplaceAllString(readDeploy(t, tc.file), "")
			m, err := conf.Parse(text)
			if err != nil {
				t.Fatalf("parse %s: %v", tc.file, err)
			}
			js, _ := m["jetstream"].(map[string]any)
			if js["domain"] != tc.domain {
				t.Errorf("%s: jetstream domain %v, want %q", tc.file, js["domain"], tc.domain)
			}
			if _, ok := m["leafnodes"].(map[string]any); !ok {
				t.Errorf("%s: no leafnodes block", tc.file)
			}
		})
	}
}

// regionServer runs a nats-server from a configuration whose text is conf,
// written in a temporary directory beside a copy of deploy/nats/<auth>.
func regionServer(t *testing.T, auth, conf string) (*server.Server, *server.Options) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, auth), []byte(readDeploy(t, "nats/"+auth)), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(path)
	if err != nil {
		t.Fatalf("configuration %s with %s: %v", path, auth, err)
	}
	opts.NoLog, opts.NoSigs = true, true
	return testkit.RunNATS(t, opts), opts
}

// TestTwoRegionPermissions runs the origin's users (hub-auth.conf) and
// region B's (auth.conf) in process, the link between them as the user
// "leaf": the mirror of persons.mirror.json follows PERSONS; region B's
// lookupd projects from it as the least-privileged user lookupd; its dead
// letters stay in region B; it cannot reach region A's JetStream; nothing
// published in region B reaches region A's PERSONS.
func TestTwoRegionPermissions(t *testing.T) {
	passwords := map[string]string{"ADMIN": "admin-pw", "LOOKUPD": "lookupd-pw", "ACCOUNTING": "accounting-pw", "PUBLISHER": "publisher-pw", "LEAF": "leaf-pw"}
	for user, pw := range passwords {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NATS_"+user+"_PASSWORD_HASH", string(h))
	}
	hub, hubOpts := regionServer(t, "hub-auth.conf", fmt.Sprintf(
		"listen: 127.0.0.1:-1\ninclude hub-auth.conf\njetstream { domain: hub, store_dir: %q }\nleafnodes { listen: 127.0.0.1:-1 }\n", t.TempDir()))
	leafURL := fmt.Sprintf("nats://leaf:%s@127.0.0.1:%d", url.PathEscape(passwords["LEAF"]), hubOpts.LeafNode.Port)
	leaf, _ := regionServer(t, "auth.conf", fmt.Sprintf(
		"listen: 127.0.0.1:-1\ninclude auth.conf\njetstream { domain: b, store_dir: %q }\nleafnodes { reconnect: \"100ms\", remotes: [ { url: %q, account: LOOKUP } ] }\n",
		t.TempDir(), leafURL))
	testkit.WaitFor(t, 10*time.Second, func() error {
		if n := hub.NumLeafNodes(); n != 1 {
			return fmt.Errorf("leaf nodes connected to the hub: %d", n)
		}
		return nil
	})
	as := func(s *server.Server, user, inbox string) (*nats.Conn, jetstream.JetStream) {
		opts := []nats.Option{nats.UserInfo(strings.ToLower(user), passwords[user]),
			nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})} // the violations tried below
		if inbox != "" {
			opts = append(opts, nats.CustomInboxPrefix(inbox))
		}
		return testkit.ConnectNATS(t, s.ClientURL(), opts...)
	}
	_, hubAdmin := as(hub, "ADMIN", "_INBOX_admin")
	_, leafAdmin := as(leaf, "ADMIN", "_INBOX_admin")
	_, publisher := as(hub, "PUBLISHER", "")
	leafLookupdNC, leafLookupd := as(leaf, "LOOKUPD", "_INBOX_lookupd")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, f := range []string{"persons.json", "persons_dlq.json"} {
		if _, err := hubAdmin.CreateStream(ctx, loadStreamConfig(t, f)); err != nil {
			t.Fatalf("region A: create %s: %v", f, err)
		}
	}
	if _, err := leafAdmin.CreateStream(ctx, loadStreamConfig(t, "persons.mirror.json")); err != nil {
		t.Fatalf("region B: create the mirror: %v", err)
	}
	const n = 3
	for i := range n {
		msg := nats.NewMsg(fmt.Sprintf("persons.consumer.%d", i))
		msg.Header.Set(jetstream.MsgIDHeader, fmt.Sprintf("ev-%d", i))
		msg.Data = []byte("{}") // invalid: dead-lettered, in region B's DLQ
		if _, err := publisher.PublishMsg(ctx, msg); err != nil {
			t.Fatalf("publish in region A: %v", err)
		}
	}

	// Region B's lookupd reads its mirror, knows its origin, projects it.
	id, err := projector.LookUpStream(ctx, leafLookupd, "PERSONS")
	if err != nil || id.Name != "PERSONS" || id.Mirror != "PERSONS" {
		t.Fatalf("region B LookUpStream = %+v, %v; want origin PERSONS through the mirror PERSONS", id, err)
	}
	store, err := projector.Open(t.TempDir(), projector.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = store.Close() })
	p := projector.New(leafLookupd, store, projector.Config{RefreshInterval: 100 * time.Millisecond})
	pctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(pctx) }()
	testkit.WaitFor(t, 30*time.Second, func() error {
		if pr := p.Progress(); pr.AppliedSeq < n || pr.MirrorOf != "PERSONS" || !pr.MirrorCutOffSince.IsZero() {
			return fmt.Errorf("region B progress %+v; want %d applied from a mirror of PERSONS in step", pr, n)
		}
		return nil
	})
	stop()
	if err := <-done; err != nil {
		t.Fatalf("region B projector: %v", err)
	}
	streamMsgs := func(js jetstream.JetStream, name string) uint64 {
		t.Helper()
		s, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		return s.CachedInfo().State.Msgs
	}
	if got := streamMsgs(leafAdmin, "PERSONS_DLQ"); got != n {
		t.Errorf("region B's PERSONS_DLQ holds %d, want %d", got, n)
	}
	if got := streamMsgs(hubAdmin, "PERSONS_DLQ"); got != 0 {
		t.Errorf("region A's PERSONS_DLQ holds %d dead letters of region B, want 0", got)
	}

	// Nothing of region A is reachable by region B's lookupd.
	hubFromB, err := jetstream.NewWithDomain(leafLookupdNC, "hub")
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	if _, err := hubFromB.Stream(short, "PERSONS"); err == nil {
		t.Error("region B's lookupd read region A's PERSONS through the domain hub")
	}
	cancelShort()
	short, cancelShort = context.WithTimeout(ctx, 2*time.Second)
	if _, err := leafLookupd.Publish(short, "persons.consumer.x", []byte("{}")); err == nil {
		t.Error("region B's lookupd published an event")
	}
	cancelShort()
	// Nothing published in region B crosses the link but what the mirror
	// needs: a subscriber in region A to everything of the service, and a
	// marker on a subject the link carries, sent after the others (one
	// connection keeps their order), says when to look.
	hubAdminNC, _ := as(hub, "ADMIN", "_INBOX_admin")
	leafAdminNC, _ := as(leaf, "ADMIN", "_INBOX_admin")
	got := make(chan *nats.Msg, 256)
	for _, subj := range []string{"persons.>", "dlq.persons.>", "audit.persons.>", "$O.>", "$JS.FC.PERSONS.marker"} {
		if _, err := hubAdminNC.Subscribe(subj, func(m *nats.Msg) { got <- m }); err != nil {
			t.Fatal(err)
		}
	}
	if err := hubAdminNC.Flush(); err != nil {
		t.Fatal(err)
	}
	// marker sends the marker id until region A receives it; it fails the
	// test for anything else region A received meanwhile.
	marker := func(id string) {
		t.Helper()
		testkit.WaitFor(t, 10*time.Second, func() error {
			if err := leafAdminNC.Publish("$JS.FC.PERSONS.marker", []byte(id)); err != nil {
				return err
			}
			timeout := time.After(20 * time.Millisecond)
			for {
				select {
				case m := <-got:
					switch {
					case m.Subject != "$JS.FC.PERSONS.marker":
						t.Errorf("%s, published in region B, reached region A", m.Subject)
					case string(m.Data) == id:
						return nil
					}
				case <-timeout:
					return fmt.Errorf("marker %s has not crossed the link", id)
				}
			}
		})
	}
	marker("interest") // the link carries region A's interest now
	for _, subj := range []string{"persons.consumer.y", "dlq.persons.consumer.y", "audit.persons.y", "$O.lookup-snapshots.C.x"} {
		if err := leafAdminNC.Publish(subj, []byte("{}")); err != nil {
			t.Fatal(err)
		}
	}
	marker("after")
	if got := streamMsgs(hubAdmin, "PERSONS"); got != n {
		t.Errorf("region A's PERSONS holds %d, want %d: something published in region B crossed the link", got, n)
	}
}
