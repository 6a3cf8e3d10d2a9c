package ledger

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

// runNATS starts an in-process NATS server with JetStream on a random
// port and returns a connection to it.
func runNATS(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return testkit.StartNATS(t)
}

// withAndWithoutBatchPublish runs test twice, as subtests
// allow_batched=true and allow_batched=false: each on a fresh server with
// the audit stream created with AllowBatchPublish so set, after mutate
// (when not nil) has changed the rest of its configuration.
func withAndWithoutBatchPublish(t *testing.T, mutate func(*jetstream.StreamConfig),
	test func(t *testing.T, nc *nats.Conn, js jetstream.JetStream, batched bool)) {
	t.Helper()
	for _, batched := range []bool{true, false} {
		t.Run(fmt.Sprint("allow_batched=", batched), func(t *testing.T) {
			nc, js := runNATS(t)
			cfg := StreamConfig(DefaultStream)
			cfg.AllowBatchPublish = batched
			if mutate != nil {
				mutate(&cfg)
			}
			if _, err := js.CreateStream(t.Context(), cfg); err != nil {
				t.Fatal(err)
			}
			test(t, nc, js, batched)
		})
	}
}

// newLedger returns a started Ledger on nc, closed when the test ends.
func newLedger(t *testing.T, nc *nats.Conn, cfg Config) *Ledger {
	t.Helper()
	if cfg.Replica == "" {
		cfg.Replica = "r1"
	}
	if cfg.AckTimeout == 0 {
		cfg.AckTimeout = 2 * time.Second
	}
	l, err := New(nc, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = l.Close(ctx)
	})
	return l
}

// disclosure returns a disclosure of persons ids by request id.
func disclosure(id string, persons ...string) events.Disclosure {
	d := events.Disclosure{RequestID: id, Subject: "user-1", Client: "app-1", Operation: "getAuthorizedSigners", Purpose: "TREAT"}
	for _, p := range persons {
		d.Persons = append(d.Persons, events.DisclosedPerson{ID: p, SSNMode: "LAST4", DOB: true})
	}
	return d
}

// streamMsgs returns the messages count of the audit stream.
func streamMsgs(t *testing.T, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(t.Context(), DefaultStream)
	if err != nil {
		t.Fatalf("audit stream: %v", err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatalf("audit stream info: %v", err)
	}
	return info.State.Msgs
}

// waitFor polls cond until it holds or 10s have passed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testkit.WaitFor(t, 10*time.Second, func() error {
		if !cond() {
			return errors.New("still waiting for " + what)
		}
		return nil
	})
}
