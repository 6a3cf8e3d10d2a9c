package natsconn

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/internal/natstest"
)

// TestWaitConnected: true for a connection to a running server; false
// within the wait for one that retries an unreachable server, and at once
// when ctx has ended.
func TestWaitConnected(t *testing.T) {
	ns := natstest.Run(t, natstest.Options(t.TempDir()))
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if !WaitConnected(context.Background(), nc, 5*time.Second) {
		t.Error("a connection to a running server is not connected")
	}

	down, err := nats.Connect("nats://127.0.0.1:1", nats.RetryOnFailedConnect(true), nats.MaxReconnects(-1))
	if err != nil {
		t.Fatal(err)
	}
	defer down.Close()
	start := time.Now()
	if WaitConnected(context.Background(), down, 200*time.Millisecond) {
		t.Error("a connection to no server is connected")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("WaitConnected took %v with a wait of 200ms", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if WaitConnected(ctx, down, time.Hour) {
		t.Error("connected with an ended context")
	}
}
