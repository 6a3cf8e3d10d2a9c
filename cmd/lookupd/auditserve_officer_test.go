package main

import (
	"context"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/erasuretest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// registries returns the settings of the shipped example registries.
func registries(t *testing.T) map[string]string {
	t.Helper()
	root, err := testkit.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return map[string]string{"LOOKUP_CLIENTS_FILE": filepath.Join(root, "deploy/registries/clients.yaml"),
		"LOOKUP_PURPOSES_FILE": filepath.Join(root, "deploy/registries/purposes.yaml")}
}

func TestAuditServeOfficerPage(t *testing.T) {
	ns := runNATS(t)
	discloseThroughLedger(t, ns.ClientURL(), "replica-a", ada, 4)
	addrs := startAuditServeWith(t, ns.ClientURL(), registries(t))
	page := "http://" + addrs["api"] + "/officer/person?id=" + ada
	auditor := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "auditor", Scope: "read:audit"})
	reader := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "alice", Scope: "read:persons"})
	for _, tc := range []struct {
		name, token string
		want        int
	}{{"auditor", auditor, http.StatusOK}, {"API scope only", reader, http.StatusForbidden}, {"no token", "", http.StatusUnauthorized}} {
		r, err := testkit.HTTPGet(nil, page, tc.token, nil)
		if err != nil || r.Status != tc.want {
			t.Fatalf("%s: GET %s = %d (%v), want %d", tc.name, page, r.Status, err, tc.want)
		}
		if tc.want == http.StatusOK && (strings.Count(string(r.Body), "<tr>") != 4+1 || r.Header.Get("Cache-Control") != "no-store" ||
			!strings.Contains(string(r.Body), "no purpose given")) {
			t.Errorf("the page of 4 disclosures: %s\n%s", r.Header, r.Body)
		}
		// A refusal is a page the officer reads, saying why.
		if tc.want != http.StatusOK && (!strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") ||
			!strings.Contains(string(r.Body), map[int]string{http.StatusForbidden: "scope read:audit", http.StatusUnauthorized: "bearer token is required"}[tc.want])) {
			t.Errorf("%s: the refusal is %s\n%s", tc.name, r.Header.Get("Content-Type"), r.Body)
		}
	}
	// The person's erasure, from the erasure bucket's evidence
	// (LOOKUP_ERASURE_BUCKET's default).
	js := jetStream(t, ns)
	testkit.PersonsStream(t, js)
	erasuretest.DeleteConsumer(t, js, "", ada)
	r, err := testkit.HTTPGet(nil, page, auditor, nil)
	if err != nil || r.Status != http.StatusOK || !strings.Contains(string(r.Body), `<h2 id="erasure">Erasure</h2>`) ||
		!strings.Contains(string(r.Body), `<tr><th scope="row">Event stream</th><td><code>PERSONS</code></td><td>nothing</td>`) {
		t.Errorf("the page after the person's erasure: %d (%v)\n%s", r.Status, err, r.Body)
	}
}

func TestAuditServeRefusesBadRegistries(t *testing.T) {
	ns := runNATS(t)
	bad := filepath.Join(t.TempDir(), "purposes.yaml")
	if err := os.WriteFile(bad, []byte("purposes:\n  - code: TREAT\n    statement: Treatment\n    accounting: exempt\n"+
		"  - code: TREAT\n    statement: Again\n    accounting: exempt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := map[string]string{"LOOKUP_HTTP_ADDR": "127.0.0.1:0", "LOOKUP_ADMIN_ADDR": "127.0.0.1:0", "LOOKUP_NATS_URL": ns.ClientURL(),
		"LOOKUP_ACCOUNTING_DIR": t.TempDir(), "LOOKUP_JWKS_FILE": writeJWKS(t), "LOOKUP_ISSUER": testIssuer, "LOOKUP_AUDIENCE": testAudience,
		"LOOKUP_PURPOSES_FILE": bad}
	err := start(t, environ, "audit", "serve").wait(t, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), bad+":5: code \"TREAT\" given twice") {
		t.Errorf("audit serve with a duplicate purpose = %v, want an error naming the file and line", err)
	}
	// Strict, over a ledger of a client and a purpose the shipped
	// registries lack.
	nc, _ := testkit.ConnectNATS(t, ns.ClientURL())
	l, err := ledger.New(nc, ledger.Config{Replica: "replica-a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Disclose(context.Background(), events.Disclosure{RequestID: "r1", Client: "robot", Purpose: "MARKETING",
		Operation: "getAuthorizedSigners", Persons: []events.DisclosedPerson{{ID: ada, SSNMode: "LAST4"}}}); err != nil {
		t.Fatal(err)
	}
	_ = l.Close(context.Background())
	maps.Copy(environ, registries(t))
	environ["LOOKUP_REGISTRIES_STRICT"] = "true"
	err = start(t, environ, "audit", "serve").wait(t, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "codes the registries lack: client robot, purpose MARKETING") {
		t.Errorf("strict audit serve over a ledger of codes the registries lack = %v, want it refused", err)
	}
}

// TestAuditServeLetter: the letter for the person through lookupd audit
// serve is recorded in the ledger as provideAccounting with the request
// date, and the person's name and address, posted to write it, are in
// the letter only: not in the audit stream, nor in the service's log.
// The letterhead is the settings' (LOOKUP_COVERED_ENTITY_NAME, ...);
// without them the letter shows a notice naming them, and audit serve
// warned of them once, at its start.
func TestAuditServeLetter(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		want     []string // in the letter
		warnings int      // of the letterhead, in the log
	}{
		{"letterhead", map[string]string{"LOOKUP_COVERED_ENTITY_NAME": "Example Health Plan", "LOOKUP_COVERED_ENTITY_ADDRESS": "1 Main Street; Springfield, IL 62701",
			"LOOKUP_PRIVACY_OFFICER_CONTACT": "privacy@example.org"},
			[]string{`<p class="entity">Example Health Plan</p>`, `<address class="from">1 Main Street<br>Springfield, IL 62701</address>`, "Privacy officer: privacy@example.org"}, 0},
		{"unset", nil, []string{`<p class="notice" role="note">`, "set LOOKUP_COVERED_ENTITY_NAME, LOOKUP_COVERED_ENTITY_ADDRESS, LOOKUP_PRIVACY_OFFICER_CONTACT for lookupd audit serve"}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, logs := auditServeLetter(t, tc.env)
			for _, s := range tc.want {
				if !strings.Contains(body, s) {
					t.Errorf("the letter lacks %q", s)
				}
			}
			if n := strings.Count(logs, "sender's letterhead"); n != tc.warnings {
				t.Errorf("%d warnings of the letterhead in the log, want %d:\n%s", n, tc.warnings, logs)
			}
		})
	}
}

// auditServeLetter writes a letter through lookupd audit serve run with
// the settings env, checks what it records and logs, and returns the
// letter and the log.
func auditServeLetter(t *testing.T, env map[string]string) (letter, logs string) {
	t.Helper()
	ns := runNATS(t)
	discloseThroughLedger(t, ns.ClientURL(), "replica-a", ada, 3)
	environ := map[string]string{"LOOKUP_HTTP_ADDR": "127.0.0.1:0", "LOOKUP_ADMIN_ADDR": "127.0.0.1:0", "LOOKUP_NATS_URL": ns.ClientURL(),
		"LOOKUP_ACCOUNTING_DIR": t.TempDir(), "LOOKUP_JWKS_FILE": writeJWKS(t), "LOOKUP_ISSUER": testIssuer, "LOOKUP_AUDIENCE": testAudience,
		"LOOKUP_REPLICA_ID": "accounting-test", "LOOKUP_LOG_LEVEL": "debug"}
	maps.Copy(environ, registries(t))
	maps.Copy(environ, env)
	p := start(t, environ, "audit", "serve")
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	auditor := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "auditor", Scope: "read:audit"})
	const name, street = "Zelda Quuxley-Fennimore", "77 Unlikely Lane"
	requested := time.Now().UTC().Format(time.DateOnly)
	form := url.Values{"id": {ada}, "requested": {requested}, "name": {name}, "address": {street + "\nNowhere, KS 66002"}}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addrs["api"]+"/officer/letter", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+auditor)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), name) || strings.Count(string(body), `<tr class="ref">`) != 3 {
		t.Fatalf("POST /officer/letter = %d\n%s", resp.StatusCode, body)
	}
	_, js := testkit.ConnectNATS(t, ns.ClientURL())
	var given []ledger.Record
	testkit.WaitFor(t, 10*time.Second, func() error {
		recs, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, ada, time.Time{}, time.Time{})
		given = nil
		for _, r := range recs {
			if r.Operation == "provideAccounting" {
				given = append(given, r)
			}
		}
		if err == nil && len(given) == 0 {
			err = errors.New("no provideAccounting record yet")
		}
		return err
	})
	if len(given) != 1 || given[0].Requested != requested || given[0].Subject != "auditor" || given[0].RequestID != resp.Header.Get("X-Request-Id") {
		t.Errorf("recorded %+v, want one provideAccounting by auditor for the request of %s", given, requested)
	}
	s, err := js.Stream(t.Context(), ledger.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= s.CachedInfo().State.LastSeq; seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(m.Data), "Zelda") || strings.Contains(string(m.Data), "Unlikely") {
			t.Errorf("the audit stream's message %d holds the person's name or address: %s", seq, m.Data)
		}
	}
	logs = p.stdout.String() + p.stderr.String()
	if strings.Contains(logs, "Zelda") || strings.Contains(logs, "Unlikely") {
		t.Errorf("the log holds the person's name or address:\n%s", logs)
	}
	return string(body), logs
}
