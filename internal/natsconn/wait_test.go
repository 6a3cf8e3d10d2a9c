package natsconn

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestReachable: nil for a connection to a running server; an error
// naming the URL without its credentials, and the connection closed,
// within the wait for one that retries an unreachable server, and at once
// when ctx has ended.
func TestReachable(t *testing.T) {
	ns := testkit.RunNATS(t, testkit.NATSOptions(t.TempDir()))
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := Reachable(t.Context(), nc, ns.ClientURL(), 5*time.Second); err != nil {
		t.Errorf("a connection to a running server: %v", err)
	}

	const downURL = "nats://user:hunter2@127.0.0.1:1"
	tests := []struct {
		name   string
		cancel bool
		wait   time.Duration
	}{
		{"wait over", false, 200 * time.Millisecond},
		{"context ended", true, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			down, err := nats.Connect(downURL, nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
			if err != nil {
				t.Fatal(err)
			}
			defer down.Close()
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancel {
				cancel()
			}
			start := time.Now()
			err = Reachable(ctx, down, downURL, tt.wait)
			if err == nil || !strings.Contains(err.Error(), "nats nats://127.0.0.1:1: not reachable within "+tt.wait.String()) {
				t.Errorf("err = %v, want not reachable naming the URL without credentials and the wait", err)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("Reachable took %v with a wait of %v", d, tt.wait)
			}
			if !down.IsClosed() {
				t.Error("the connection was left open")
			}
		})
	}
}
