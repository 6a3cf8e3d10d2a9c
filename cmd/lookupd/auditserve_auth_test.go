package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"go.yaml.in/yaml/v3"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/testing/erasuretest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// deployedNATS starts an in-process NATS server with the users and
// permissions of deploy/nats/auth.conf, each user's password being
// "<user>-password" (stored in clear: nats-server compares a value that is
// not a bcrypt hash as it is), and returns its host:port.
func deployedNATS(t *testing.T) string {
	t.Helper()
	for _, user := range []string{"ADMIN", "LOOKUPD", "ACCOUNTING", "PUBLISHER"} {
		t.Setenv("NATS_"+user+"_PASSWORD_HASH", strings.ToLower(user)+"-password")
	}
	dir := t.TempDir()
	auth, err := os.ReadFile(filepath.Join("..", "..", "deploy", "nats", "auth.conf"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "auth.conf"), auth, 0o600); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte("include \"auth.conf\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("%s with deploy/nats/auth.conf: %v", conf, err)
	}
	base := testkit.NATSOptions(t.TempDir())
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs =
		base.Host, base.Port, true, base.StoreDir, true, true
	return testkit.RunNATS(t, opts).Addr().String()
}

// deployedAuditUser returns the NATS user and inbox prefix the deploy
// files give lookupd audit serve, failing unless deploy/compose/secure.yaml
// (service lookupd-audit) and deploy/k8s/lookupd-audit.yaml (its
// ConfigMap) give the same.
func deployedAuditUser(t *testing.T) (user, inboxPrefix string) {
	t.Helper()
	read := func(path string, v any) {
		b, err := os.ReadFile(filepath.Join("..", "..", "deploy", path))
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
	}
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	read("compose/secure.yaml", &compose)
	env := compose.Services["lookupd-audit"].Environment
	user, inboxPrefix = env["LOOKUP_NATS_USER"], env["LOOKUP_NATS_INBOX_PREFIX"]
	dec := yaml.NewDecoder(openDeploy(t, "k8s/lookupd-audit.yaml"))
	for {
		var doc struct {
			Kind     string                `yaml:"kind"`
			Metadata struct{ Name string } `yaml:"metadata"`
			Data     map[string]string     `yaml:"data"`
		}
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("k8s/lookupd-audit.yaml: no ConfigMap lookupd-audit-config (%v)", err)
		}
		if doc.Kind == "ConfigMap" && doc.Metadata.Name == "lookupd-audit-config" {
			if doc.Data["LOOKUP_NATS_USER"] != user || doc.Data["LOOKUP_NATS_INBOX_PREFIX"] != inboxPrefix {
				t.Errorf("k8s/lookupd-audit.yaml: NATS user %q inbox prefix %q, compose/secure.yaml: %q %q",
					doc.Data["LOOKUP_NATS_USER"], doc.Data["LOOKUP_NATS_INBOX_PREFIX"], user, inboxPrefix)
			}
			return user, inboxPrefix
		}
	}
}

// openDeploy opens deploy/<path>, closed when the test ends.
func openDeploy(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "deploy", path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestAuditServeAsTheDeployedNATSUser: lookupd audit serve works with the
// NATS user the deploy files give it (deploy/compose/secure.yaml,
// deploy/k8s/lookupd-audit.yaml), a user of its own: it indexes the audit
// stream, becomes ready and records each search on its own chain before it
// answers. That user may do nothing else: read PERSONS, write another
// chain, delete or purge the audit stream.
func TestAuditServeAsTheDeployedNATSUser(t *testing.T) {
	user, inbox := deployedAuditUser(t)
	if user == "lookupd" || user == "admin" || inbox == "" || inbox == natsconn.DefaultInboxPrefix {
		t.Fatalf("the deploy files run lookupd audit serve as the NATS user %q with the inbox prefix %q: want a user and a prefix of its own", user, inbox)
	}
	addr := deployedNATS(t)
	discloseThroughLedger(t, "nats://admin:admin-password@"+addr, "replica-b", ada, 2)
	_, adminJS := testkit.ConnectNATS(t, "nats://admin:admin-password@"+addr)
	createStream(t, adminJS, "PERSONS")
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte(strings.ToLower(user)+"-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs := startAuditServeWith(t, "nats://"+addr, map[string]string{
		"LOOKUP_NATS_USER": user, "LOOKUP_NATS_PASSWORD_FILE": pw, "LOOKUP_NATS_INBOX_PREFIX": inbox, "LOOKUP_REPLICA_ID": "accounting"})
	auditor := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "auditor", Scope: "read:audit"})
	search := func() (testkit.HTTPResponse, error) {
		r, err := testkit.HTTPGet(nil, "http://"+addrs["api"]+"/fhir/AuditEvent?entity="+ada, auditor, nil)
		if err == nil && r.Status != http.StatusOK {
			err = fmt.Errorf("GET = %d %s, want 200", r.Status, r.Body)
		}
		return r, err
	}
	r, err := search()
	if err != nil {
		t.Fatal(err)
	}
	if people, _ := disclosuresIn(t, r.Body); len(people) != 2 {
		t.Errorf("%d disclosures of ada, want 2", len(people))
	}
	// The search was recorded (published as the service's user): the
	// index shows it to the next searches.
	testkit.WaitFor(t, 10*time.Second, func() error {
		r, err := search()
		if err != nil {
			return err
		}
		if n := searchesIn(t, r.Body); n == 0 {
			return errors.New("no record of a search of ada's accounting")
		}
		return nil
	})
	// The officer's page reads the erasure's evidence as that user.
	erasuretest.DeleteConsumer(t, adminJS, "", ada)
	r, err = testkit.HTTPGet(nil, "http://"+addrs["api"]+"/officer/person?id="+ada, auditor, nil)
	if err != nil || !strings.Contains(string(r.Body), `<tr><th scope="row">Event stream</th><td><code>PERSONS</code></td><td>nothing</td>`) {
		t.Errorf("the officer's page of an erased person, as %s: %v\n%s", user, err, r.Body)
	}

	t.Run("nothing else", func(t *testing.T) { checkAccountingUserRefused(t, addr, user, inbox) })
}

// checkAccountingUserRefused connects to the server at addr as user
// (with its inbox prefix) and checks that the server refuses what the
// accounting service never does.
func checkAccountingUserRefused(t *testing.T, addr, user, inbox string) {
	t.Helper()
	nc, _ := testkit.ConnectNATS(t, "nats://"+addr, nats.UserInfo(user, strings.ToLower(user)+"-password"), nats.CustomInboxPrefix(inbox),
		nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})) // kept by LastError, not printed
	// The server refuses a publish or a subscription it does not allow
	// with an error the connection keeps; a flush waits for it.
	refused := func(kind, subject string, do func() error) error {
		if err := do(); err != nil {
			return err
		}
		if err := nc.Flush(); err != nil {
			return err
		}
		if err := nc.LastError(); err == nil || !strings.Contains(err.Error(), kind+` to "`+subject+`"`) {
			return fmt.Errorf("%s %s allowed (last error %w)", kind, subject, err)
		}
		return nil
	}
	for _, tc := range []struct{ name, subject string }{
		{"read PERSONS", "$JS.API.STREAM.INFO.PERSONS"},
		{"follow PERSONS", "$JS.API.CONSUMER.CREATE.PERSONS"},
		{"get a message of PERSONS", "$JS.API.DIRECT.GET.PERSONS"},
		{"write another replica's chain", ledger.ReplicaSubject("replica-b")},
		{"publish an event", "persons.x"},
		{"create a stream", "$JS.API.STREAM.CREATE.OTHER"},
		{"delete the audit stream", "$JS.API.STREAM.DELETE." + ledger.DefaultStream},
		{"purge the audit stream", "$JS.API.STREAM.PURGE." + ledger.DefaultStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := refused("Publish", tc.subject, func() error { return nc.PublishRequest(tc.subject, nc.NewRespInbox(), []byte("{}")) }); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("read lookupd's replies", func(t *testing.T) {
		subject := natsconn.DefaultInboxPrefix + ".>"
		if err := refused("Subscription", subject, func() error { _, err := nc.SubscribeSync(subject); return err }); err != nil {
			t.Error(err)
		}
	})
}

// searchesIn returns the number of records of searches of the accounting
// in a search's Bundle.
func searchesIn(t *testing.T, body []byte) int {
	t.Helper()
	var b fhir.Bundle
	if err := json.Unmarshal(body, &b); err != nil {
		t.Fatalf("not a Bundle (%v): %s", err, body)
	}
	n := 0
	for _, e := range b.Entry {
		ent := e.Resource.Entity[0]
		if ent.Detail[len(ent.Detail)-1].ValueString == accounting.OperationSearch {
			n++
		}
	}
	return n
}
