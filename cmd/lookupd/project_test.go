package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/wait"
	"github.com/lookup/persons/projector"
)

func TestProjectUntilCaughtUp(t *testing.T) {
	ns, js := personsNATS(t)
	demo, err := newDemoData()
	if err != nil {
		t.Fatal(err)
	}
	pub := events.NewPublisher(js)
	var last uint64
	for _, ev := range demo.Events {
		if last, err = pub.Publish(context.Background(), ev); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(t.TempDir(), "data")
	environ := map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_DATA_DIR": dir}

	p := start(t, environ, "project", "--until-caught-up", "--progress-interval", "10ms")
	if err := p.wait(t, 60*time.Second); err != nil {
		t.Fatalf("project returned %v\nstderr:\n%s", err, p.stderr)
	}
	logs := p.stderr.String()
	for _, want := range []string{`"msg":"projector done"`, `"caught_up":true`, fmt.Sprintf(`"applied_sequence":%d`, last)} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %s:\n%s", want, logs)
		}
	}

	s, err := projector.Open(dir, projector.StoreOptions{})
	if err != nil {
		t.Fatalf("open built store: %v", err)
	}
	defer s.Close()
	if cp, err := s.Checkpoint(); err != nil || cp != last {
		t.Errorf("checkpoint = %d, %v; want %d", cp, err, last)
	}
	if _, sg, err := s.Signers(context.Background(), demo.Consumer); err != nil || len(sg) != 8 {
		t.Errorf("signers of %s: %d, %v; want 8", demo.Consumer, len(sg), err)
	}
	if _, err := s.Person(context.Background(), demo.DeletedConsumer); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("deleted consumer: %v, want ErrNotFound", err)
	}
}

// TestProjectStoppedBeforeCaughtUp checks that --until-caught-up reports
// an interruption before the read model caught up as an error.
func TestProjectStoppedBeforeCaughtUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there: NATS unreachable
	p := start(t, map[string]string{"LOOKUP_NATS_URL": "nats://" + addr, "LOOKUP_DATA_DIR": t.TempDir()},
		"project", "--until-caught-up")
	wait.For(t, 20*time.Second, func() error {
		if !strings.Contains(p.stderr.String(), "nats unreachable") {
			return errors.New("no log line about NATS being unreachable")
		}
		return nil
	})
	p.cancel()
	err = p.wait(t, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "before the read model caught up") {
		t.Errorf("err = %v, want it to say it stopped before catching up", err)
	}
}
