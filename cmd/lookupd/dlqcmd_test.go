package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestDLQCommands dead-letters an event with "lookupd project", lists it
// with "lookupd dlq ls" and replays it with "lookupd dlq replay".
func TestDLQCommands(t *testing.T) {
	ns, js := personsNATS(t)
	const subject = "persons.consumer.0b7e8a52-5f1e-4c1e-9a43-8f7a1c2d3e4f"
	const secret = "123-45-6789"
	m := nats.NewMsg(subject)
	m.Data = []byte(`{"specversion":"1.0","data":{"ssn":"` + secret + `"}}`)
	m.Header.Set("Nats-Msg-Id", "broken-1")
	if _, err := js.PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	environ := map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_DATA_DIR": filepath.Join(t.TempDir(), "data")}
	if p := start(t, environ, "project", "--until-caught-up"); p.wait(t, 60*time.Second) != nil {
		t.Fatalf("project failed:\n%s", p.stderr)
	}
	runCmd := func(args ...string) (string, error) {
		t.Helper()
		var out, errOut testkit.LogBuffer
		err := run(t.Context(), args, env(environ), &out, &errOut)
		if strings.Contains(out.String()+errOut.String(), secret) {
			t.Errorf("lookupd %v printed the body's personal data", args)
		}
		return out.String(), err
	}

	out, err := runCmd("dlq", "ls")
	if err != nil {
		t.Fatalf("dlq ls: %v", err)
	}
	row := regexp.MustCompile(`(?m)^(\d+) +\S+ +` + regexp.QuoteMeta(subject) + ` +PERSONS:1 +invalid event`).FindStringSubmatch(out)
	if row == nil || !strings.Contains(out, "1 dead letter(s) in PERSONS_DLQ") {
		t.Fatalf("dlq ls =\n%s\nwant a row: seq, time, %s, PERSONS:1, the reason; and the count", out, subject)
	}
	seq := row[1]
	if out, err := runCmd("dlq", "ls", "--json"); err != nil || !strings.Contains(out, `"msg_id":"broken-1"`) {
		t.Errorf("dlq ls --json = %s, %v; want a JSON line with the original msg id", out, err)
	}

	tests := []struct {
		name    string
		args    []string
		wantErr error // nil: success; settings.ErrUsage: usage error; else any error
		wantOut string
	}{
		{"neither --seq nor --all", []string{"dlq", "replay"}, settings.ErrUsage, ""},
		{"both --seq and --all", []string{"dlq", "replay", "--seq", seq, "--all"}, settings.ErrUsage, ""},
		{"unknown sub-command", []string{"dlq", "purge"}, settings.ErrUsage, ""},
		{"still invalid", []string{"dlq", "replay", "--seq", seq}, errors.New("any"), "still invalid 1"},
		{"no such letter", []string{"dlq", "replay", "--seq", "999"}, errors.New("any"), ""},
		{"forced", []string{"dlq", "replay", "--all", "--force"}, nil, "replayed 1,"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCmd(tt.args...)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("lookupd %v: %v\n%s", tt.args, err, out)
			case errors.Is(tt.wantErr, settings.ErrUsage) && !errors.Is(err, settings.ErrUsage):
				t.Fatalf("lookupd %v = %v, want a usage error", tt.args, err)
			case tt.wantErr != nil && err == nil:
				t.Fatalf("lookupd %v succeeded, want an error\n%s", tt.args, out)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("lookupd %v printed\n%s\nwant %q", tt.args, out, tt.wantOut)
			}
		})
	}

	last, err := js.Stream(t.Context(), "PERSONS")
	if err != nil {
		t.Fatal(err)
	}
	if got := last.CachedInfo().State.LastSeq; got != 2 {
		t.Errorf("PERSONS last sequence = %d after the replay, want 2", got)
	}
	if got, err := last.GetMsg(t.Context(), 2); err != nil || !bytes.Equal(got.Data, m.Data) || got.Subject != subject {
		t.Errorf("PERSONS seq 2 = %v, %v; want the original event on %s", got, err, subject)
	}
	if out, err := runCmd("dlq", "ls"); err != nil || !strings.Contains(out, "0 dead letter(s)") {
		t.Errorf("dlq ls after the replay = %s, %v; want 0 dead letters", out, err)
	}
}

func TestDLQUnreachableNATS(t *testing.T) {
	environ := map[string]string{"LOOKUP_NATS_URL": "nats://127.0.0.1:1"}
	d := dlqCommand{connectWait: 500 * time.Millisecond}
	start := time.Now()
	err := d.run(t.Context(), []string{"ls"}, env(environ), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Errorf("dlq ls = %v, want NATS not reachable", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("gave up after %v, want about %v", took, d.connectWait)
	}
}
