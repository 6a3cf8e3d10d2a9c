package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
)

func TestServeAuditsDisclosures(t *testing.T) {
	ns, js := personsNATS(t)
	consumer := adaConsumer(t, "a-consumer")
	withBoth := dev.DemoSigner(consumer.ConsumerID, 0)
	withBoth.SSN, withBoth.DateOfBirth = "123456789", "1980-01-02"
	withNone := dev.DemoSigner(consumer.ConsumerID, 1)
	withNone.SSN, withNone.DateOfBirth = "", ""
	publish(t, js, consumer, withBoth, withNone)

	environ := serveEnv(t, ns, t.TempDir())
	environ["LOOKUP_REPLICA_ID"] = "replica-a"
	p := start(t, environ, "serve")
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "alice", Scope: "read:persons read:persons:ssn"})
	base := "http://" + addrs["api"] + "/api/v1/authorized-signers?consumer_id=" + consumer.ConsumerID
	for i, q := range []string{"&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", "", "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=NONE"} {
		code, body, err := getWithHeaders(base+q, tok, map[string]string{"Lookup-Purpose": "TREAT", "X-Request-Id": fmt.Sprintf("req-%d", i)})
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET %s = %d %s, %v", q, code, body, err)
		}
	}
	nats := map[string]string{"LOOKUP_NATS_URL": ns.ClientURL()}

	// The accounting of the signer with protected data: two disclosures,
	// newest first; none for the signer without.
	var out, errOut testkit.LogBuffer
	if err := run(t.Context(), []string{"audit", "--person", withBoth.SignerID}, env(nats), &out, &errOut); err != nil {
		t.Fatalf("audit --person: %v\n%s", err, errOut.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit --person printed %d lines, want 2:\n%s", len(lines), out.String())
	}
	var recs []ledger.Record
	for _, l := range lines {
		var r ledger.Record
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	if recs[0].RequestID != "req-2" || recs[0].SSNMode != "" || !recs[0].DOBDisclosed ||
		recs[1].RequestID != "req-0" || recs[1].SSNMode != "FULL" || recs[1].Subject != "alice" ||
		recs[1].Purpose != "TREAT" || recs[1].Replica != "replica-a" || recs[1].ReadModelSeq != 3 {
		t.Errorf("records = %+v", recs)
	}
	// The SSN in any form a body shows it whole, and the birth date (a
	// shorter fragment such as "123" may occur in a timestamp or a hash).
	if s := out.String(); strings.Contains(s, "123456789") || strings.Contains(s, "123-45-6789") || strings.Contains(s, "1980-01-02") {
		t.Errorf("accounting holds protected data: %s", s)
	}
	if errOut.String() != "" {
		t.Errorf("audit --person with records: stderr %q, want nothing (integration reads stdout and stderr as one)", errOut.String())
	}
	out, errOut = testkit.LogBuffer{}, testkit.LogBuffer{}
	if err := run(t.Context(), []string{"audit", "--person", withNone.SignerID}, env(nats), &out, &errOut); err != nil {
		t.Fatalf("audit --person: %v", err)
	}
	if want := "0 disclosures of " + withNone.SignerID; out.String() != "" || !strings.Contains(errOut.String(), want) {
		t.Errorf("audit --person of a signer never disclosed: stdout %q, stderr %q; want nothing and %q", out.String(), errOut.String(), want)
	}
	out = testkit.LogBuffer{}
	if err := run(t.Context(), []string{"audit", "--person", withNone.SignerID, "--format", "fhir"}, env(nats), &out, &errOut); err != nil {
		t.Fatalf("audit --format fhir: %v", err)
	}
	var b fhir.Bundle
	if err := json.Unmarshal([]byte(out.String()), &b); err != nil || b.ResourceType != "Bundle" || b.Total == nil || *b.Total != 0 {
		t.Errorf("fhir accounting of a signer never disclosed = %s (%v), want an empty Bundle", out.String(), err)
	}
	out, errOut = testkit.LogBuffer{}, testkit.LogBuffer{}
	if err := run(t.Context(), []string{"audit", "--person", withNone.SignerID}, env(nats), &out, &errOut); err != nil {
		t.Fatalf("audit --person: %v", err)
	}
	if out.String() != "" || !strings.Contains(errOut.String(), "0 disclosures") {
		t.Errorf("accounting of a signer never disclosed: stdout %q, stderr %q; want nothing, and 0 disclosures on stderr", out.String(), errOut.String())
	}

	out = testkit.LogBuffer{}
	if err := run(t.Context(), []string{"audit", "verify"}, env(nats), &out, &errOut); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out.String())
	}
	if !strings.HasPrefix(out.String(), "2 records in 2 messages in 1 chains") {
		t.Errorf("audit verify printed %q", out.String())
	}

	// Without the audit stream, protected answers are 503 and plain ones
	// still 200.
	if err := js.DeleteStream(t.Context(), ledger.DefaultStream); err != nil {
		t.Fatal(err)
	}
	code, body, _ := getWithHeaders(base+"&expand=PROTECTED_PERSONAL_DATA", tok, nil)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "audit-unavailable") || strings.Contains(string(body), "6789") {
		t.Errorf("protected GET without the audit stream = %d %s, want 503 audit-unavailable", code, body)
	}
	if code, body, _ := getWithHeaders(base, tok, nil); code != http.StatusOK {
		t.Errorf("plain GET without the audit stream = %d %s, want 200", code, body)
	}
}

func TestAuditCommandLineErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no person", []string{"audit"}},
		{"bad person", []string{"audit", "--person", "x"}},
		{"bad format", []string{"audit", "--person", "aaaaaaaa-0000-4000-8000-000000000001", "--format", "xml"}},
		{"bad since", []string{"audit", "--person", "aaaaaaaa-0000-4000-8000-000000000001", "--since", "yesterday"}},
		{"stray argument", []string{"audit", "verify", "now"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut testkit.LogBuffer
			err := run(t.Context(), tc.args, env(nil), &out, &errOut)
			if !errors.Is(err, settings.ErrUsage) {
				t.Errorf("run(%q) = %v, want a usage error", tc.args, err)
			}
		})
	}
}
