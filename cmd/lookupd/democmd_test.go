package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/testing/testkit"
)

func TestDemoCommandPublishes(t *testing.T) {
	ns := runNATS(t)
	js := jetStream(t, ns)
	createStream(t, js, "DEMO")
	data := testDemoData(t)
	environ := map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_STREAM": "DEMO"}
	for i, wantNew := range []int{len(data.Events), 0} {
		t.Run(fmt.Sprintf("run %d", i+1), func(t *testing.T) {
			var out, errOut testkit.LogBuffer
			if err := run(t.Context(), []string{"demo"}, env(environ), &out, &errOut); err != nil {
				t.Fatalf("demo: %v (stderr %q)", err, errOut.String())
			}
			want := fmt.Sprintf("%d events, %d new", len(data.Events), wantNew)
			if !strings.Contains(out.String(), want) || !strings.Contains(out.String(), data.Consumer) {
				t.Errorf("output = %q, want %q and consumer %s", out.String(), want, data.Consumer)
			}
			s, err := js.Stream(t.Context(), "DEMO")
			if err != nil {
				t.Fatal(err)
			}
			if got := s.CachedInfo().State.Msgs; got != uint64(len(data.Events)) {
				t.Errorf("stream holds %d messages, want %d (a second run adds nothing)", got, len(data.Events))
			}
		})
	}
}

func TestDemoCommandErrors(t *testing.T) {
	ns := runNATS(t)
	tests := []struct {
		name    string
		environ map[string]string
		want    []string
	}{
		{"missing stream", map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_STREAM": "NOPE"},
			[]string{"stream NOPE not found", "nats stream add"}},
		{"unreachable NATS, credentials hidden", map[string]string{"LOOKUP_NATS_URL": "nats://user:s3cr3t@127.0.0.1:1"},
			[]string{"nats nats://127.0.0.1:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut testkit.LogBuffer
			err := run(t.Context(), []string{"demo"}, env(tt.environ), &out, &errOut)
			if err == nil {
				t.Fatalf("demo succeeded, want an error; stdout %q", out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "s3cr3t") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// TestDemoPrint checks that --print writes every demo event as a JSON
// line that is valid under the contract on its own subject.
func TestDemoPrint(t *testing.T) {
	var out, errOut testkit.LogBuffer
	if err := run(t.Context(), []string{"demo", "--print"}, env(nil), &out, &errOut); err != nil {
		t.Fatalf("demo --print: %v (stderr %q)", err, errOut.String())
	}
	data := testDemoData(t)
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		var line struct { // the documented fields of a line
			Subject string          `json:"subject"`
			MsgID   string          `json:"msg_id"`
			Event   json.RawMessage `json:"event"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("line %d is not JSON: %v", n+1, err)
		}
		ev, err := events.Decode(line.Subject, line.Event)
		if err != nil {
			t.Errorf("line %d: %v", n+1, err)
			continue
		}
		if want := data.Events[n]; ev.ID != want.ID || line.MsgID != want.ID || line.Subject != want.Subject() {
			t.Errorf("line %d: id %s, msg_id %s, subject %s; want %s on %s", n+1, ev.ID, line.MsgID, line.Subject, want.ID, want.Subject())
		}
		n++
	}
	if n != len(data.Events) {
		t.Errorf("printed %d events, want %d", n, len(data.Events))
	}
}

// TestDemoBinary: demo --binary publishes every event in binary content
// mode (ce- headers, data as the body), each of which decodes as the
// event it was made of.
func TestDemoBinary(t *testing.T) {
	ns := runNATS(t)
	js := jetStream(t, ns)
	createStream(t, js, "DEMO")
	data := testDemoData(t)
	var out, errOut testkit.LogBuffer
	if err := run(t.Context(), []string{"demo", "--binary"}, env(map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_STREAM": "DEMO"}), &out, &errOut); err != nil {
		t.Fatalf("demo --binary: %v (stderr %q)", err, errOut.String())
	}
	s, err := js.Stream(t.Context(), "DEMO")
	if err != nil {
		t.Fatal(err)
	}
	for seq := uint64(1); seq <= uint64(len(data.Events)); seq++ {
		m, err := s.GetMsg(t.Context(), seq)
		if err != nil {
			t.Fatal(err)
		}
		if !events.IsBinary(m.Header) {
			t.Fatalf("message %d is not in binary mode: %v", seq, m.Header)
		}
		ev, err := events.DecodeMsg(m.Subject, m.Header, m.Data)
		if err != nil || ev.ID != data.Events[seq-1].ID {
			t.Fatalf("message %d decodes to %s, %v; want event %s", seq, ev.ID, err, data.Events[seq-1].ID)
		}
	}
}
