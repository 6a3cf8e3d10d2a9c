package ledger

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestStreamConfigMatchesDeployFiles keeps the stream a Ledger creates
// when it is missing and deploy/streams/persons_audit*.json in step,
// replicas aside.
func TestStreamConfigMatchesDeployFiles(t *testing.T) {
	for _, tc := range []struct {
		file     string
		replicas int
	}{{"persons_audit.json", 1}, {"persons_audit.r3.json", 3}} {
		t.Run(tc.file, func(t *testing.T) {
			raw := []byte(testkit.ReadRepoFile(t, "deploy/streams/"+tc.file))
			var file jetstream.StreamConfig
			if err := json.Unmarshal(raw, &file); err != nil {
				t.Fatalf("%s: %v", tc.file, err)
			}
			if file.Replicas != tc.replicas {
				t.Errorf("num_replicas = %d, want %d", file.Replicas, tc.replicas)
			}
			code := StreamConfig(file.Name)
			code.Replicas = file.Replicas
			a, _ := json.Marshal(file)
			b, _ := json.Marshal(code)
			if !bytes.Equal(a, b) {
				t.Errorf("StreamConfig and %s differ:\nfile: %s\ncode: %s", tc.file, a, b)
			}
		})
	}
}

func TestEnsureStreamCreatesOnceAndKeepsAnExistingOne(t *testing.T) {
	_, js := runNATS(t)
	ctx := t.Context()
	if err := EnsureStream(ctx, js, "A"); err != nil {
		t.Fatalf("EnsureStream: %v", err)
	}
	s, err := js.Stream(ctx, "A")
	if err != nil {
		t.Fatalf("stream not created: %v", err)
	}
	if got := s.CachedInfo().Config.Subjects; len(got) != 2 || got[0] != "audit.replicas.*" || got[1] != "audit.persons.*" {
		t.Errorf("subjects = %v", got)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "B", Subjects: []string{"other.>"}}); err != nil {
		t.Fatal(err)
	}
	if err := EnsureStream(ctx, js, "B"); err != nil {
		t.Fatalf("EnsureStream on an existing stream: %v", err)
	}
	s, _ = js.Stream(ctx, "B")
	if got := s.CachedInfo().Config.Subjects; got[0] != "other.>" {
		t.Errorf("existing stream changed: subjects %v", got)
	}
}
