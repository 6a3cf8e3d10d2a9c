package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/projector"
)

// TestStreamMismatchIsFatal checks that serve and project refuse, as a
// start-up error naming the problem, a read model projected from another
// incarnation of the stream (projector.ErrStreamMismatch).
func TestStreamMismatchIsFatal(t *testing.T) {
	ns, js := personsNATS(t)
	c := events.Consumer{ConsumerID: demoID("u-consumer", 0), BusinessID: demoID("business", 0), FirstName: "A", LastName: "B"}
	publish(t, js, c)
	dir := t.TempDir()
	p := start(t, map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_DATA_DIR": dir}, "project", "--until-caught-up")
	if err := p.wait(t, 60*time.Second); err != nil {
		t.Fatalf("project: %v\nstderr:\n%s", err, p.stderr)
	}
	// The stream is deleted and created again: the read model belongs to
	// the old one.
	if err := js.DeleteStream(context.Background(), "PERSONS"); err != nil {
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
