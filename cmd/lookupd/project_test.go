package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

func TestProjectUntilCaughtUp(t *testing.T) {
	ns, js := personsNATS(t)
	data := testDemoData(t)
	pub := events.NewPublisher(js)
	var last uint64
	for _, ev := range data.Events {
		var err error
		if last, err = pub.Publish(t.Context(), ev); err != nil {
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
	if cp := checkpoint(t, s); cp != last {
		t.Errorf("checkpoint = %d, want %d", cp, last)
	}
	if _, sg, err := s.Signers(t.Context(), data.Consumer); err != nil || len(sg) != 8 {
		t.Errorf("signers of %s: %d, %v; want 8", data.Consumer, len(sg), err)
	}
	if _, err := s.Person(t.Context(), data.DeletedConsumer); !errors.Is(err, events.ErrNotFound) {
		t.Errorf("deleted consumer: %v, want ErrNotFound", err)
	}
}

// TestProjectStoppedBeforeCaughtUp checks that --until-caught-up reports
// an interruption before the read model caught up as an error.
func TestProjectStoppedBeforeCaughtUp(t *testing.T) {
	// Nothing listens on the port: NATS unreachable.
	p := start(t, map[string]string{"LOOKUP_NATS_URL": fmt.Sprintf("nats://127.0.0.1:%d", freePort(t)), "LOOKUP_DATA_DIR": t.TempDir()},
		"project", "--until-caught-up")
	testkit.WaitFor(t, 20*time.Second, func() error {
		if !strings.Contains(p.stderr.String(), "nats unreachable") {
			return errors.New("no log line about NATS being unreachable")
		}
		return nil
	})
	p.cancel()
	err := p.wait(t, 30*time.Second)
	if err == nil || !strings.Contains(err.Error(), "before the read model caught up") {
		t.Errorf("err = %v, want it to say it stopped before catching up", err)
	}
}

// TestStreamMismatchIsFatal checks that serve and project refuse, as a
// start-up error naming the problem, a read model projected from another
// incarnation of the stream (projector.ErrStreamMismatch).
func TestStreamMismatchIsFatal(t *testing.T) {
	ns, js, c := oneConsumerNATS(t)
	dir := t.TempDir()
	p := start(t, map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_DATA_DIR": dir}, "project", "--until-caught-up")
	if err := p.wait(t, 60*time.Second); err != nil {
		t.Fatalf("project: %v\nstderr:\n%s", err, p.stderr)
	}
	// The stream is deleted and created again: the read model belongs to
	// the old one.
	if err := js.DeleteStream(t.Context(), "PERSONS"); err != nil {
		t.Fatal(err)
	}
	createStream(t, js, "PERSONS")
	publish(t, js, c)

	for _, tc := range []struct {
		name    string
		environ map[string]string
		args    []string
	}{
		{"serve", serveEnv(t, ns, dir), []string{"serve"}},
		{"project", map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_DATA_DIR": dir}, []string{"project", "--until-caught-up"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.environ, tc.args...)
			err := p.wait(t, 30*time.Second)
			if !errors.Is(err, projector.ErrStreamMismatch) {
				t.Fatalf("err = %v, want projector.ErrStreamMismatch\nstderr:\n%s", err, p.stderr)
			}
			if exitCode(err) != 1 {
				t.Errorf("exit code = %d, want 1", exitCode(err))
			}
			for _, want := range []string{`"PERSONS"`, "lookupd project --until-caught-up"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %s", err, want)
				}
			}
		})
	}
}
