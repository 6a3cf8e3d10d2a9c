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

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/audit"
	"github.com/lookup/persons/internal/devkey"
	"github.com/lookup/persons/internal/httpget"
	"github.com/lookup/persons/internal/natstest"
	"github.com/lookup/persons/internal/wait"
)

// deployedNATS starts an in-process NATS server with the users and
// permissions of deploy/nats/auth.conf, each user's password being
// "<user>-password" (stored in clear: nats-server compares a value that is
// not a bcrypt hash as it is), and returns its host:port.
func deployedNATS(t *testing.T) string {
	t.Helper()
	for _, user := range []string{"ADMIN", "LOOKUPD", "PUBLISHER"} {
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
	base := natstest.Options(t.TempDir())
	opts.Host, opts.Port, opts.JetStream, opts.StoreDir, opts.NoLog, opts.NoSigs =
		base.Host, base.Port, true, base.StoreDir, true, true
	return natstest.Run(t, opts).Addr().String()
}

// TestAuditServeAsTheDeployedNATSUser: lookupd audit serve works with the
// NATS user the deploy files give it (deploy/compose/secure.yaml,
// deploy/k8s/lookupd-audit.yaml): it indexes the audit stream, becomes ready and
// records each search on its own chain before it answers.
func TestAuditServeAsTheDeployedNATSUser(t *testing.T) {
	addr := deployedNATS(t)
	discloseThroughLedger(t, "nats://admin:admin-password@"+addr, "replica-b", ada, 2)
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte("lookupd-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs := startAuditServeWith(t, "nats://"+addr, map[string]string{
		"LOOKUP_NATS_USER": "lookupd", "LOOKUP_NATS_PASSWORD_FILE": pw, "LOOKUP_REPLICA_ID": "accounting"})
	auditor := token(t, devkey.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "auditor", Scope: "read:audit"})
	search := func() (httpget.Response, error) {
		r, err := httpget.Get(nil, "http://"+addrs["api"]+"/fhir/AuditEvent?entity="+ada, auditor, nil)
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
	// The search was recorded (published as the user lookupd): the index
	// shows it to the next searches.
	wait.For(t, 10*time.Second, func() error {
		r, err := search()
		if err != nil {
			return err
		}
		if n := searchesIn(t, r.Body); n == 0 {
			return errors.New("no record of a search of ada's accounting")
		}
		return nil
	})
}

// searchesIn returns the number of records of searches of the accounting
// in a search's Bundle.
func searchesIn(t *testing.T, body []byte) int {
	t.Helper()
	var b audit.Bundle
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
