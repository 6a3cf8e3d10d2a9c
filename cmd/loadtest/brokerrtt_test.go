package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

func TestRunRTT(t *testing.T) {
	srv := testkit.RunNATS(t, testkit.NATSOptions(t.TempDir()))
	var out bytes.Buffer
	if err := runRTT(context.Background(), []string{"--url", srv.ClientURL(), "--stream", "RTT_TEST", "--n", "7"}, &out); err != nil {
		t.Fatalf("runRTT: %v", err)
	}
	var got loadtest.BrokerRTT
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("output %q: %v", out.Bytes(), err)
	}
	if got.N != 7 || got.PublishAck <= 0 || got.Ping <= 0 {
		t.Errorf("got %+v, want N 7 and both round trips above 0", got)
	}
}

func TestRunRTTWithoutServer(t *testing.T) {
	var out bytes.Buffer
	if err := runRTT(context.Background(), []string{"--url", "nats://127.0.0.1:1", "--n", "1"}, &out); err == nil {
		t.Errorf("runRTT without a server: nil error, printed %q", out.Bytes())
	}
}
