package dev

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestPersonsStreamIsDeployed: the stream of dev is the one operators
// apply.
func TestPersonsStreamIsDeployed(t *testing.T) {
	var want jetstream.StreamConfig
	if err := json.Unmarshal([]byte(testkit.ReadRepoFile(t, "deploy/streams/persons.json")), &want); err != nil {
		t.Fatal(err)
	}
	if got := PersonsStream(want.Name); !reflect.DeepEqual(got, want) {
		t.Errorf("PersonsStream = %+v\nwant deploy/streams/persons.json = %+v", got, want)
	}
}

// TestStartEnsureRestart: a started server takes the stream (twice: the
// second is an update), keeps it across a restart on the same directory,
// and refuses connections once closed.
func TestStartEnsureRestart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nats")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	run := func(t *testing.T, publish bool) (msgs uint64) {
		t.Helper()
		s, err := StartNATS("devnats-test", dir)
		if err != nil {
			t.Fatalf("Start: %v", err)
		}
		defer s.Close()
		nc, err := nats.Connect(s.URL)
		if err != nil {
			t.Fatalf("connect %s: %v", s.URL, err)
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := EnsurePersonsStream(ctx, js, "PERSONS"); err != nil {
				t.Fatalf("EnsurePersonsStream: %v", err)
			}
		}
		if publish {
			if _, err := js.Publish(ctx, "persons.test", []byte("{}")); err != nil {
				t.Fatalf("publish: %v", err)
			}
		}
		st, err := js.Stream(ctx, "PERSONS")
		if err != nil {
			t.Fatal(err)
		}
		info, err := st.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := info.Config.MaxBytes, PersonsStream("PERSONS").MaxBytes; got != want {
			t.Errorf("stream MaxBytes = %d, want %d", got, want)
		}
		return info.State.Msgs
	}
	if got := run(t, true); got != 1 {
		t.Errorf("first run: %d messages, want 1", got)
	}
	if got := run(t, false); got != 1 {
		t.Errorf("after a restart on the same directory: %d messages, want 1", got)
	}
}

func TestCloseStops(t *testing.T) {
	s, err := StartNATS("devnats-test", t.TempDir())
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s.Close()
	nc, err := nats.Connect(s.URL, nats.MaxReconnects(0), nats.Timeout(time.Second))
	if err == nil {
		nc.Close()
		t.Fatalf("connect to %s after Close succeeded, want refused", s.URL)
	}
}
