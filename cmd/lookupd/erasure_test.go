package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// The distinctive values of the erased consumer and its signers: none may
// be left in a file of a replica's data directory.
var erasedValues = []string{"987654329", "Zyxwvutsrq", "77 Quillfeather Lane", "Qwertyuiopas"}

type erasureFixture struct {
	ns       *server.Server
	js       jetstream.JetStream
	consumer string
	signers  []string
	env      map[string]string
}

func newErasureFixture(t *testing.T) *erasureFixture {
	t.Helper()
	ns, js := personsNATS(t)
	f := &erasureFixture{ns: ns, js: js, consumer: dev.DemoID("erase-consumer", 0),
		signers: []string{dev.DemoID("erase-signer", 0), dev.DemoID("erase-signer", 1)}}
	f.env = serveEnv(t, ns, filepath.Join(t.TempDir(), "data"))
	f.env["LOOKUP_SNAPSHOT_BUCKET"] = "snaps"
	f.env["LOOKUP_SNAPSHOT_INTERVAL"] = "1s"
	f.env["LOOKUP_ERASURE_DELAY"] = "4s"
	f.env["LOOKUP_REPLICA_ID"] = "r1"
	f.env["LOOKUP_MEMORY_BUDGET"] = "128MiB" // Badger compression off: the values are plain in the files
	return f
}

func (f *erasureFixture) publish(t *testing.T, version uint64, data any) uint64 {
	t.Helper()
	ev, err := events.NewEvent("urn:test", version, data)
	if err != nil {
		t.Fatal(err)
	}
	seq, err := events.NewPublisher(f.js).Publish(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// seed publishes the consumer (two versions), its two signers with the
// distinctive values, and an invalid event on the consumer's subject
// (a dead letter holding its name).
func (f *erasureFixture) seed(t *testing.T) {
	t.Helper()
	business := dev.DemoID("erase-business", 0)
	f.publish(t, 1, events.Consumer{ConsumerID: f.consumer, BusinessID: business, FirstName: "Ada", LastName: "Zyxwvutsrq"})
	f.publish(t, 2, events.Consumer{ConsumerID: f.consumer, BusinessID: business, FirstName: "Adah", LastName: "Zyxwvutsrq"})
	for i, id := range f.signers {
		f.publish(t, 1, events.Signer{SignerID: id, ConsumerID: f.consumer, FirstName: "Quill", LastName: "Qwertyuiopas",
			AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive, Type: events.SignerTypeGuardian,
			SSN: fmt.Sprint(987654329 - i), DateOfBirth: "1970-01-0" + fmt.Sprint(i+1),
			Address: &events.Address{Line1: "77 Quillfeather Lane", City: "Boston", State: "MA", ZipCode: "02101", Country: "US"}})
	}
	if _, err := f.js.Publish(t.Context(), events.SubjectPrefixConsumer+f.consumer,
		[]byte(`{"specversion":"1.0","last_name":"Zyxwvutsrq"}`)); err != nil {
		t.Fatal(err)
	}
}

// filesHolding returns the files under dir that hold one of the values.
func filesHolding(t *testing.T, dir string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed meanwhile
		}
		if err != nil {
			return err
		}
		for _, v := range erasedValues {
			if bytes.Contains(b, []byte(v)) {
				found = append(found, filepath.Base(path)+": "+v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// erased reports what is left of the consumer and its signers before the
// deletion at del: in the stream, the dead letters, the snapshots, the
// files of dir; nil once nothing is.
func (f *erasureFixture) erased(t *testing.T, del uint64, dir string) error {
	t.Helper()
	sn, err := projector.NewSnapshots(f.js, projector.SnapshotsConfig{Bucket: "snaps"})
	if err != nil {
		return err
	}
	for _, id := range append([]string{f.consumer}, f.signers...) {
		rep, err := erasure.Status(t.Context(), erasure.StatusConfig{JS: f.js, Live: true, Stream: "PERSONS",
			DLQStream: "PERSONS_DLQ", Snapshots: sn}, id)
		if err != nil {
			return err
		}
		if len(rep.Entities) != 1 || !rep.Entities[0].Complete || rep.Entities[0].DeletionSeq != del {
			var b bytes.Buffer
			_ = rep.WriteText(&b)
			return fmt.Errorf("%s not erased yet:\n%s", id, b.String())
		}
	}
	if left := filesHolding(t, dir); len(left) > 0 {
		return fmt.Errorf("files still hold %v", left)
	}
	return nil
}

// TestErasureEverywhere (issue 44): a consumer with two signers carrying
// distinctive values is deleted; within the bound, no earlier message of
// the three subjects is in PERSONS, none in the dead letters, no snapshot
// from before is in the bucket, the replica's files hold none of the
// values, and erasure status says so and when; a replica bootstrapped
// from a snapshot and one rebuilt from zero answer 404, also after a
// stale upsert. The same with a SIGTERM and a SIGKILL just after the
// deletion is applied, the erasure under way.
func TestErasureEverywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program several times")
	}
	for _, tc := range []struct {
		name string
		sig  syscall.Signal // 0: none
	}{{"undisturbed", 0}, {"SIGTERM", syscall.SIGTERM}, {"SIGKILL", syscall.SIGKILL}} {
		t.Run(tc.name, func(t *testing.T) {
			f := newErasureFixture(t)
			f.seed(t)
			tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "erase", Scope: "read:persons"})
			c := startChild(t, f.env, "serve")
			api := "http://" + c.addrs(t)["api"]
			waitOK(t, 30*time.Second, api+"/api/v1/persons/"+f.consumer, tok)
			sn, err := projector.NewSnapshots(f.js, projector.SnapshotsConfig{Bucket: "snaps"})
			if err != nil {
				t.Fatal(err)
			}
			testkit.WaitFor(t, 30*time.Second, func() error {
				if s, err := sn.Stored(t.Context(), "PERSONS"); err != nil || len(s) == 0 {
					return fmt.Errorf("no snapshot of the seeded model yet (%w)", err)
				}
				if left := filesHolding(t, f.env["LOOKUP_DATA_DIR"]); len(left) == 0 {
					return errors.New("the values are not in the files yet: the scan would prove nothing")
				}
				return nil
			})
			del := f.publish(t, 3, events.ConsumerDeleted{ConsumerID: f.consumer})
			if tc.sig != 0 {
				waitNotFound(t, api+"/api/v1/persons/"+f.consumer, tok)
				if err := c.cmd.Process.Signal(tc.sig); err != nil {
					t.Fatal(err)
				}
				<-c.done
				if tc.sig == syscall.SIGTERM && c.err != nil { // a signal in the erasure's middle ends with status 0
					t.Fatalf("exit after SIGTERM: %v\n%s", c.err, c.stderr)
				}
				c = startChild(t, f.env, "serve")
				api = "http://" + c.addrs(t)["api"]
			}
			testkit.WaitFor(t, 60*time.Second, func() error { return f.erased(t, del, f.env["LOOKUP_DATA_DIR"]) })

			var out, errOut bytes.Buffer
			if err := run(t.Context(), []string{"erasure", "status", "--person", f.signers[0], "--json"}, env(f.env), &out, &errOut); err != nil {
				t.Fatalf("erasure status: %v\n%s", err, errOut.String())
			}
			var rep erasure.Report
			if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Entities) != 1 || !rep.Entities[0].Complete ||
				rep.Entities[0].CompletedAt.IsZero() || rep.Entities[0].ErasedWith != f.consumer {
				t.Fatalf("erasure status: %+v (%v)\n%s", rep, err, out.String())
			}
			for _, v := range erasedValues {
				if strings.Contains(out.String(), v) {
					t.Errorf("erasure status shows %q", v)
				}
			}
			f.publish(t, 2, events.Consumer{ConsumerID: f.consumer, BusinessID: dev.DemoID("erase-business", 0), FirstName: "Stale", LastName: "Zyxwvutsrq"})
			waitNotFound(t, api+"/api/v1/persons/"+f.consumer, tok)
			// Stopped, so that no snapshot is written or pruned while the
			// next replica restores the newest.
			if err := c.signalAndWait(t, syscall.SIGTERM, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			f.checkOtherReplicas(t, tok)
		})
	}
}

// checkOtherReplicas starts a replica bootstrapped from the newest
// snapshot and one rebuilt from zero: both answer 404 for the consumer
// and its signers.
func (f *erasureFixture) checkOtherReplicas(t *testing.T, tok string) {
	t.Helper()
	for _, name := range []string{"bootstrapped", "from-zero"} {
		e := map[string]string{}
		for k, v := range f.env {
			e[k] = v
		}
		e["LOOKUP_DATA_DIR"] = filepath.Join(t.TempDir(), name)
		e["LOOKUP_REPLICA_ID"] = name
		if name == "from-zero" {
			delete(e, "LOOKUP_SNAPSHOT_BUCKET")
		}
		c := startChild(t, e, "serve")
		addrs := c.addrs(t)
		waitReady(t, addrs["admin"])
		api := "http://" + addrs["api"]
		waitNotFound(t, api+"/api/v1/persons/"+f.consumer, tok)
		waitNotFound(t, api+"/api/v1/authorized-signers?consumer_id="+f.consumer, tok)
		if name == "bootstrapped" {
			testkit.WaitFor(t, 10*time.Second, func() error {
				if !c.logged("bootstrapped from a snapshot; catching up from its position") {
					return fmt.Errorf("%s: not bootstrapped from a snapshot:\n%s", name, c.stderr)
				}
				return nil
			})
		}
		if err := c.signalAndWait(t, syscall.SIGTERM, 30*time.Second); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// waitNotFound waits until url answers 404, the read model having caught
// up with what was published.
func waitNotFound(t *testing.T, url, tok string) {
	t.Helper()
	testkit.WaitFor(t, 30*time.Second, func() error {
		got, body, err := get(url, tok)
		if err != nil || got != 404 {
			return fmt.Errorf("GET %s: %d %s (%w), want 404", url, got, body, err)
		}
		return nil
	})
}

// TestErasureAsTheDeployedNATSUser: lookupd serve and erasure status, as
// the NATS user lookupd of deploy/nats/auth.conf (least privilege plus
// what the erasure adds), erase a deleted consumer from the stream, its
// dead letters and the snapshots, and report it.
func TestErasureAsTheDeployedNATSUser(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program")
	}
	addr := deployedNATS(t)
	_, adminJS := testkit.ConnectNATS(t, "nats://admin:admin-password@"+addr)
	createStream(t, adminJS, "PERSONS")
	f := &erasureFixture{js: adminJS, consumer: dev.DemoID("erase-consumer", 0),
		signers: []string{dev.DemoID("erase-signer", 0), dev.DemoID("erase-signer", 1)}}
	f.seed(t)
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte("lookupd-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := map[string]string{
		"LOOKUP_HTTP_ADDR": "127.0.0.1:0", "LOOKUP_ADMIN_ADDR": "127.0.0.1:0", "LOOKUP_NATS_URL": "nats://" + addr,
		"LOOKUP_DATA_DIR": filepath.Join(t.TempDir(), "data"), "LOOKUP_JWKS_FILE": writeJWKS(t),
		"LOOKUP_ISSUER": testIssuer, "LOOKUP_AUDIENCE": testAudience, "LOOKUP_NATS_USER": "lookupd",
		"LOOKUP_NATS_PASSWORD_FILE": pw, "LOOKUP_SNAPSHOT_BUCKET": "lookup-snapshots", "LOOKUP_SNAPSHOT_INTERVAL": "1s",
		"LOOKUP_ERASURE_DELAY": "4s", "LOOKUP_REPLICA_ID": "r1", "LOOKUP_MEMORY_BUDGET": "128MiB",
	}
	c := startChild(t, e, "serve")
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "erase", Scope: "read:persons"})
	api := "http://" + c.addrs(t)["api"]
	waitOK(t, 30*time.Second, api+"/api/v1/persons/"+f.consumer, tok)
	del := f.publish(t, 3, events.ConsumerDeleted{ConsumerID: f.consumer})
	testkit.WaitFor(t, 60*time.Second, func() error {
		var out, errOut bytes.Buffer
		if err := run(t.Context(), []string{"erasure", "status", "--person", f.consumer, "--json"}, env(e), &out, &errOut); err != nil {
			return fmt.Errorf("erasure status: %w\n%s", err, errOut.String())
		}
		var rep erasure.Report
		if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
			return err
		}
		if len(rep.Entities) != 1 || !rep.Entities[0].Complete || rep.Entities[0].DeletionSeq != del {
			return fmt.Errorf("not erased yet: %s", out.String())
		}
		return nil
	})
	if c.logged("erasure pass failed; retrying") {
		t.Errorf("the erasure failed on its way (permissions?):\n%s", c.stderr)
	}
}
