//go:build integration

package integration

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/audittest"
)

// TestAuditNATSKilled (issue 22): the NATS server is killed (SIGKILL)
// while lookupd answers protected GETs from 32 clients with
// LOOKUP_AUDIT=required, its ledger's messages in flight, and started
// again on the same store. Every request sent while NATS was down and
// answered before it was back is a 503, never a 200; once it is back the
// answers are 200 again; every answer sent with status 200 has its
// records stored, none is stored twice, and audit verify passes on the
// whole stream.
func TestAuditNATSKilled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := startAuditedStage(ctx, t, "replica-natskill")
	nn, js, f, is, ld := st.nn, st.js, st.f, st.is, st.ld

	tok := is.tokenWith(t, "read:persons read:persons:ssn", time.Hour, map[string]any{"azp": "app-natskill", "sub": "user-natskill"})
	reads := audittest.Start(audittest.Config{URL: ld.api + signersPath(f.consumer), Token: tok, Workers: 32, Prefix: "natskill",
		Headers: map[string]string{"Lookup-Purpose": "TREATMENT"}})
	t.Cleanup(func() { reads.Stop() })
	waitAnswers(t, "answers before the kill", reads.OK, 300)

	killContainer(ctx, t, nn.ctr)
	down := time.Now() // the server's process has ended
	failedAt := reads.Failed()
	waitAnswers(t, "answers refused while NATS is down", reads.Failed, failedAt+100)
	back := time.Now()
	nn.start(ctx, t)
	okAt := reads.OK()
	waitAnswers(t, "answers after NATS is back", reads.OK, okAt+300)
	answers := reads.Stop()

	t.Run("answers while NATS was down are 503", func(t *testing.T) {
		during, bad := 0, 0
		for _, a := range answers {
			if a.Sent.Before(down) || a.Done.After(back) {
				continue
			}
			if during++; a.Status != http.StatusServiceUnavailable {
				if bad++; bad <= 5 {
					t.Errorf("request %s sent while NATS was down: status %d (%v), want 503", a.ID, a.Status, a.Err)
				}
			}
		}
		if during < 50 {
			t.Errorf("%d requests sent and answered while NATS was down: too few to tell", during)
		}
		t.Logf("%d requests sent and answered while NATS was down, %d of them not a 503", during, bad)
	})

	t.Run("every answer sent has its records, once; verify passes", func(t *testing.T) {
		var led audittest.Ledger
		eventually(t, 60*time.Second, "the audit stream read back", func() error {
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			var err error
			led, err = audittest.ReadLedger(cctx, js, ledger.DefaultStream)
			return err
		})
		sent := led.Check(t, answers, []string{f.signerBoth, f.signerSSN})
		t.Logf("%d answers sent of %d requests; stream: %d records in %d messages", sent, len(answers), led.Records, led.Report.Messages)
		if code, out := lookupdCommand(ctx, t, ld, "audit", "verify"); code != 0 || !strings.HasSuffix(out, "OK\n") {
			t.Errorf("lookupd audit verify: exit %d:\n%s", code, out)
		}
	})
}

// signersPath is the protected GET signers of consumer: each signer's SSN
// in full and date of birth.
func signersPath(consumer string) string {
	return "/api/v1/authorized-signers?consumer_id=" + consumer + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL"
}

// waitAnswers polls count until it reaches n.
func waitAnswers(t *testing.T, what string, count func() int64, n int64) {
	t.Helper()
	eventually(t, 90*time.Second, what, func() error {
		if got := count(); got < n {
			return fmt.Errorf("%d, want %d", got, n)
		}
		return nil
	})
}

// killContainer sends SIGKILL to the container's process and waits until
// the container has stopped: its process has ended.
func killContainer(ctx context.Context, t *testing.T, c testcontainers.Container) {
	t.Helper()
	if out, err := exec.Command("docker", "kill", c.GetContainerID()).CombinedOutput(); err != nil {
		t.Fatalf("docker kill: %v: %s", err, out)
	}
	eventually(t, 30*time.Second, "the killed container stopped", func() error {
		st, err := c.State(ctx)
		if err != nil {
			return err
		}
		if st.Running {
			return errors.New("still running")
		}
		return nil
	})
}
