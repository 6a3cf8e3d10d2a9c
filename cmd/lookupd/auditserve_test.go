package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
)

// The persons of the accounting tests: ada disclosed 12 times, bob 3
// times, cyd never.
const (
	ada = "aaaaaaaa-0000-4000-8000-00000000000a"
	bob = "bbbbbbbb-0000-4000-8000-00000000000b"
	cyd = "cccccccc-0000-4000-8000-00000000000c"
)

// discloseThroughLedger records n disclosures of person through a real
// ledger of replica on url, three records a message at most.
func discloseThroughLedger(t *testing.T, url, replica, person string, n int) {
	t.Helper()
	nc, _ := testkit.ConnectNATS(t, url)
	l, err := ledger.New(nc, ledger.Config{Replica: replica, MaxMessageRecords: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close(context.Background()) }()
	for i := range n {
		d := events.Disclosure{RequestID: fmt.Sprintf("%s-%d", person[:3], i), Subject: "alice", Operation: "getAuthorizedSigners",
			Persons: []events.DisclosedPerson{{ID: person, SSNMode: "LAST4"}}}
		if err := l.Disclose(t.Context(), d); err != nil {
			t.Fatalf("Disclose: %v", err)
		}
	}
}

// startAuditServe starts lookupd audit serve on the NATS server at url and returns the
// addresses of its listeners once it is ready.
func startAuditServe(t *testing.T, url string) map[string]string {
	t.Helper()
	return startAuditServeWith(t, url, nil)
}

// startAuditServeWith is startAuditServe with the settings of extra added
// to (or replacing) the test's.
func startAuditServeWith(t *testing.T, url string, extra map[string]string) map[string]string {
	t.Helper()
	environ := map[string]string{
		"LOOKUP_HTTP_ADDR":      "127.0.0.1:0",
		"LOOKUP_ADMIN_ADDR":     "127.0.0.1:0",
		"LOOKUP_NATS_URL":       url,
		"LOOKUP_ACCOUNTING_DIR": t.TempDir(),
		"LOOKUP_JWKS_FILE":      writeJWKS(t),
		"LOOKUP_ISSUER":         testIssuer,
		"LOOKUP_AUDIENCE":       testAudience,
		"LOOKUP_REPLICA_ID":     "accounting-test",
	}
	maps.Copy(environ, extra)
	p := start(t, environ, "audit", "serve")
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	return addrs
}

// disclosuresIn returns the records of a search's Bundle, those of
// searches of the accounting left out, and the next link.
func disclosuresIn(t *testing.T, body []byte) (people []string, next string) {
	t.Helper()
	var b fhir.Bundle
	if err := json.Unmarshal(body, &b); err != nil || b.ResourceType != "Bundle" || b.Type != "searchset" {
		t.Fatalf("not a searchset Bundle (%v): %s", err, body)
	}
	for _, e := range b.Entry {
		ent := e.Resource.Entity[0]
		if ent.Detail[len(ent.Detail)-1].ValueString == accounting.OperationSearch {
			continue
		}
		people = append(people, strings.TrimPrefix(ent.What.Reference, "Patient/"))
	}
	for _, l := range b.Link {
		if l.Relation == "next" {
			next = l.URL
		}
	}
	return people, next
}

func TestAuditServeAnswersAPersonsDisclosures(t *testing.T) {
	ns := runNATS(t)
	discloseThroughLedger(t, ns.ClientURL(), "replica-a", ada, 12)
	discloseThroughLedger(t, ns.ClientURL(), "replica-a", bob, 3)
	addrs := startAuditServe(t, ns.ClientURL())
	api := "http://" + addrs["api"]
	auditor := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "auditor", Scope: "read:audit"})
	reader := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "alice", Scope: "read:persons read:persons:ssn"})

	for _, tc := range []struct {
		name, token, person string
		wantStatus          int
		wantPeople          int
		wantType            string // the problem's type, for an error
	}{
		{"auditor, ada", auditor, ada, http.StatusOK, 12, ""},
		{"auditor, bob", auditor, bob, http.StatusOK, 3, ""},
		{"auditor, cyd", auditor, cyd, http.StatusOK, 0, ""},
		{"API scope only", reader, ada, http.StatusForbidden, 0, "insufficient-scope"},
		{"no token", "", ada, http.StatusUnauthorized, 0, "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := testkit.HTTPGet(nil, api+"/fhir/AuditEvent?entity="+tc.person, tc.token, nil)
			if err != nil || r.Status != tc.wantStatus {
				t.Fatalf("GET = %d %s (%v), want %d", r.Status, r.Body, err, tc.wantStatus)
			}
			if r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("Cache-Control %q, X-Content-Type-Options %q; want no-store and nosniff", r.Header.Get("Cache-Control"), r.Header.Get("X-Content-Type-Options"))
			}
			if tc.wantStatus != http.StatusOK {
				var p struct{ Type string }
				if json.Unmarshal(r.Body, &p) != nil || !strings.HasSuffix(p.Type, "/"+tc.wantType) ||
					r.Header.Get("Content-Type") != "application/problem+json" {
					t.Errorf("answer %s %s, want the API's problem %s", r.Header.Get("Content-Type"), r.Body, tc.wantType)
				}
				if c := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(c, "Bearer") {
					t.Errorf("WWW-Authenticate = %q, want a Bearer challenge", c)
				}
				return
			}
			people, _ := disclosuresIn(t, r.Body)
			if len(people) != tc.wantPeople {
				t.Errorf("%d disclosures, want %d", len(people), tc.wantPeople)
			}
			for _, p := range people {
				if p != tc.person {
					t.Errorf("the accounting of %s holds a disclosure of %s", tc.person, p)
				}
			}
		})
	}

	t.Run("paging", func(t *testing.T) {
		var people []string
		target := "/fhir/AuditEvent?entity=" + ada + "&_count=5"
		pages := 0
		for ; target != ""; pages++ {
			code, body, err := get(api+target, auditor)
			if err != nil || code != http.StatusOK {
				t.Fatalf("page %d: GET %s = %d %s (%v)", pages, target, code, body, err)
			}
			page, next := disclosuresIn(t, body)
			people, target = append(people, page...), next
			if pages > 10 {
				t.Fatal("no last page")
			}
		}
		if len(people) != 12 || pages < 3 {
			t.Errorf("%d pages held %d disclosures of ada, want 12 on at least 3", pages, len(people))
		}
	})

	t.Run("JSON lines", func(t *testing.T) {
		r, err := testkit.HTTPGet(nil, api+"/fhir/AuditEvent?_format=jsonl&_count=2&entity="+bob, auditor, nil)
		if err != nil || r.Status != http.StatusOK || r.Header.Get("Content-Type") != "application/jsonl" ||
			!strings.Contains(r.Header.Get("Link"), `rel="next"`) {
			t.Fatalf("GET jsonl = %d %s Link %q %s (%v)", r.Status, r.Header.Get("Content-Type"), r.Header.Get("Link"), r.Body, err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(r.Body)), "\n") {
			var rec ledger.Record
			if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.PersonID != bob {
				t.Errorf("line %q (%v), want a record of bob", l, err)
			}
		}
	})

	t.Run("searches recorded", func(t *testing.T) {
		_, js := testkit.ConnectNATS(t, ns.ClientURL())
		testkit.WaitFor(t, 10*time.Second, func() error {
			recs, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, cyd, time.Time{}, time.Time{})
			if err != nil {
				return err
			}
			for _, r := range recs {
				if r.Operation == accounting.OperationSearch && r.Subject == "auditor" && r.Replica == "accounting-test" {
					return nil
				}
			}
			return errors.New("no record of the auditor's search of cyd's accounting")
		})
	})

	t.Run("index lag", func(t *testing.T) {
		code, body, err := get("http://"+addrs["admin"]+"/metrics", "")
		if err != nil || code != http.StatusOK || !strings.Contains(string(body), accounting.MetricIndexLag+" ") {
			t.Errorf("GET /metrics = %d (%v), want %s in:\n%s", code, err, accounting.MetricIndexLag, body)
		}
	})
}

func TestAuditPersonAsksTheAccountingService(t *testing.T) {
	ns := runNATS(t)
	discloseThroughLedger(t, ns.ClientURL(), "replica-a", ada, 7)
	addrs := startAuditServe(t, ns.ClientURL())
	tokFile := filepath.Join(t.TempDir(), "token")
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "auditor", Scope: "read:audit"})
	if err := os.WriteFile(tokFile, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := map[string]string{"LOOKUP_ACCOUNTING_URL": "http://" + addrs["api"], "LOOKUP_ACCOUNTING_TOKEN_FILE": tokFile,
		"LOOKUP_NATS_URL": "nats://127.0.0.1:1"} // not used: the service answers
	for _, tc := range []struct {
		name, person string
		wantLines    int
		wantStderr   string
	}{
		{"disclosed", ada, 7, ""},
		{"never disclosed", cyd, 0, "0 disclosures of " + cyd},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut testkit.LogBuffer
			if err := run(t.Context(), []string{"audit", "--person", tc.person}, env(environ), &out, &errOut); err != nil {
				t.Fatalf("audit --person: %v\n%s", err, errOut.String())
			}
			lines := 0
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				var r ledger.Record
				if l != "" && json.Unmarshal([]byte(l), &r) == nil && r.PersonID == tc.person {
					lines++
				}
			}
			if lines != tc.wantLines || !strings.Contains(errOut.String(), tc.wantStderr) {
				t.Errorf("audit --person: %d records, stderr %q; want %d and %q", lines, errOut.String(), tc.wantLines, tc.wantStderr)
			}
		})
	}
	t.Run("no token file", func(t *testing.T) {
		var out, errOut testkit.LogBuffer
		err := run(t.Context(), []string{"audit", "--person", ada, "--accounting-url", "http://" + addrs["api"]}, env(nil), &out, &errOut)
		if !errors.Is(err, settings.ErrUsage) {
			t.Errorf("audit --accounting-url without a token file = %v, want a usage error", err)
		}
	})
}

// TestAuditServeMemoryBudget: audit serve takes LOOKUP_MEMORY_BUDGET and,
// once its index has caught up (the soft limit lifted while it built),
// keeps Go's soft memory limit at 3/4 of it.
func TestAuditServeMemoryBudget(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	ns := runNATS(t)
	discloseThroughLedger(t, ns.ClientURL(), "replica-a", ada, 5)
	startAuditServeWith(t, ns.ClientURL(), map[string]string{"LOOKUP_MEMORY_BUDGET": "64MiB"})
	testkit.WaitFor(t, 10*time.Second, func() error {
		if got := debug.SetMemoryLimit(-1); got != 48<<20 {
			return fmt.Errorf("soft memory limit %d once caught up, want %d (3/4 of 64MiB)", got, 48<<20)
		}
		return nil
	})
}
