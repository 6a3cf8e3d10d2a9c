package loadtest

import (
	"slices"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// TestDeployedStream: the streams of deploy/streams are read as the
// server's configuration, renamed.
func TestDeployedStream(t *testing.T) {
	s, err := DeployedStream(PersonsStreamFile, "MODEL")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "MODEL" || !slices.Equal(s.Subjects, []string{"persons.>"}) || s.Storage != jetstream.FileStorage || s.MaxMsgsPerSubject != 16 {
		t.Errorf("persons stream = %+v", s)
	}
	a, err := DeployedStream(AuditStreamFile, "LEDGER")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "LEDGER" || !a.AllowBatchPublish || a.Discard != jetstream.DiscardNew {
		t.Errorf("audit stream = %+v", a)
	}
	if _, err := DeployedStream("no-such.json", "X"); err == nil {
		t.Error("a missing stream file: no error")
	}
}
