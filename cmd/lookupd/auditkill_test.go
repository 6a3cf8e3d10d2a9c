package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/audittest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// killFixture is a consumer with two signers holding an SSN (one a date
// of birth too) and one holding neither: each protected GET signers of
// the consumer discloses the first two.
func killFixture(t *testing.T) (consumer string, disclosed []string, data []any) {
	t.Helper()
	consumer = dev.DemoID("kill-consumer", 0)
	disclosed = []string{dev.DemoID("kill-signer", 0), dev.DemoID("kill-signer", 1)}
	signer := func(id, ssn, dob string) events.Signer {
		return events.Signer{SignerID: id, ConsumerID: consumer, FirstName: "S", LastName: "K",
			AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusActive, Type: events.SignerTypeGuardian,
			SSN: ssn, DateOfBirth: dob}
	}
	data = []any{
		events.Consumer{ConsumerID: consumer, BusinessID: dev.DemoID("kill-business", 0), FirstName: "Ada", LastName: "Lovelace"},
		signer(disclosed[0], "123-45-6789", "1791-12-26"),
		signer(disclosed[1], "987-65-4321", ""),
		signer(dev.DemoID("kill-signer", 2), "", ""),
	}
	return consumer, disclosed, data
}

// killRounds is how many times TestAuditLedgerSurvivesSIGKILL kills the
// program. An answer released while its message waits in the ledger's
// queue is lost at the first kill; one released as its message is sent,
// before the acknowledgement, only when the kill comes before the message
// has left the process: a kill catches that one time in three or four.
const killRounds = 4

// TestAuditLedgerSurvivesSIGKILL (issue 22): lookupd serve, the real
// program in a process of its own with LOOKUP_AUDIT=required, answers
// protected GETs from many clients at once and is killed (SIGKILL) in the
// middle, its ledger's messages in flight; then again, killRounds times,
// each time started on the same read model and stream. After each kill
// every answer a client received with status 200 has its records in the
// audit stream, none is stored twice, and audit verify passes on the whole
// stream. Started once more, it answers every request, stops cleanly, and
// its chain has gone on from the last message stored at each start,
// without a gap: one chain, messages 1 to n, verify passes.
func TestAuditLedgerSurvivesSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the program several times under load")
	}
	ns, js := personsNATS(t)
	consumer, disclosed, data := killFixture(t)
	publish(t, js, data...)
	e := serveEnv(t, ns, filepath.Join(t.TempDir(), "data"))
	e["LOOKUP_AUDIT"] = "required"
	e["LOOKUP_REPLICA_ID"] = "replica-kill"
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "kill", Scope: "read:persons read:persons:ssn"})
	path := "/api/v1/authorized-signers?consumer_id=" + consumer + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL"
	load := func(prefix string) (*child, *audittest.Reads) { return loadChild(t, e, path, tok, prefix, 200) }
	ctx := t.Context()

	var all []audittest.Answer
	for round := range killRounds {
		c, reads := load(fmt.Sprint("kill-", round))
		if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-c.done
		answers := reads.Stop()
		all = append(all, answers...)
		notSent := len(answers) - len(audittest.Released(answers))
		if notSent == 0 {
			t.Fatalf("kill %d: all %d requests were answered 200: the kill cut none short, the test proves nothing", round, len(answers))
		}
		led := readLedger(ctx, t, js)
		sent := led.Check(t, all, disclosed)
		stored := 0
		for _, a := range answers {
			if !a.Released() && len(led.ByRequest[a.ID]) > 0 {
				stored++
			}
		}
		t.Logf("kill %d: %d answers sent so far; %d requests of this run not answered 200 (cut short, or refused after the kill), %d of them with their records stored; stream: %d records in %d messages",
			round, sent, notSent, stored, led.Records, led.Report.Messages)
		if t.Failed() {
			t.FailNow()
		}
	}
	checkAuditVerify(t, ns.ClientURL())

	// Started once more on the same read model and stream: it answers
	// every request, and its chain goes on from the last message stored.
	c, reads := load("last")
	last := reads.Stop()
	if err := c.signalAndWait(t, syscall.SIGTERM, 30*time.Second); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, c.stderr)
	}
	if n := reads.Failed(); n > 0 {
		t.Errorf("%d requests of the last run not answered 200", n)
	}
	led := readLedger(ctx, t, js)
	led.Check(t, append(all, last...), disclosed)
	if len(led.Report.Chains) != 1 {
		t.Fatalf("%d chains, want the one of replica-kill: %+v", len(led.Report.Chains), led.Report.Chains)
	}
	if ch := led.Report.Chains[0]; ch.First != 1 || ch.Last != uint64(ch.Messages) || ch.Messages != led.Report.Messages {
		t.Errorf("chain %+v: want messages 1 to %d, each held", ch, led.Report.Messages)
	}
	checkAuditVerify(t, ns.ClientURL())
}

// loadChild starts lookupd serve on environment e, waits until it answers
// the GET path with tok, and sends that GET at it from 64 clients until
// minAnswers are answered 200; the load goes on.
func loadChild(t *testing.T, e map[string]string, path, tok, prefix string, minAnswers int64) (*child, *audittest.Reads) {
	t.Helper()
	c := startChild(t, e, "serve")
	addrs := c.addrs(t)
	waitReady(t, addrs["admin"])
	url := "http://" + addrs["api"] + path
	waitOK(t, 30*time.Second, url, tok) // the fixture applied
	r := audittest.Start(audittest.Config{URL: url, Token: tok, Workers: 64, Prefix: prefix,
		Headers: map[string]string{"Lookup-Purpose": "TREATMENT"}})
	t.Cleanup(func() { r.Stop() })
	testkit.WaitFor(t, 60*time.Second, func() error {
		if got := r.OK(); got < minAnswers {
			return fmt.Errorf("%d answers 200 (%d others), want %d", got, r.Failed(), minAnswers)
		}
		return nil
	})
	return c, r
}

// readLedger reads the whole audit stream and verifies it.
func readLedger(ctx context.Context, t *testing.T, js jetstream.JetStream) audittest.Ledger {
	t.Helper()
	l, err := audittest.ReadLedger(ctx, js, ledger.DefaultStream)
	if err != nil {
		t.Fatalf("read the audit stream: %v", err)
	}
	return l
}

// checkAuditVerify runs lookupd audit verify on the NATS server at url:
// it must exit 0 and say OK.
func checkAuditVerify(t *testing.T, url string) {
	t.Helper()
	var out, errOut testkit.LogBuffer
	err := run(t.Context(), []string{"audit", "verify"}, env(map[string]string{"LOOKUP_NATS_URL": url}), &out, &errOut)
	if err != nil || !strings.HasSuffix(out.String(), "OK\n") {
		t.Errorf("audit verify: %v\n%s%s", err, out.String(), errOut.String())
	}
}
