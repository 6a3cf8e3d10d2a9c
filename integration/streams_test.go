package integration

// Unit tests (no build tag, run by `make test`) of the stream definitions in
// deploy/streams: they are the server's StreamConfig JSON that
// `nats stream add --config` reads, so they must decode into
// jetstream.StreamConfig without unknown fields, create streams on a real
// server, and behave as deploy/README.md says.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

const streamsDir = "../deploy/streams"

// loadStreamConfig decodes one file of deploy/streams, refusing unknown fields.
func loadStreamConfig(t *testing.T, name string) jetstream.StreamConfig {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(streamsDir, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cfg jetstream.StreamConfig
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("decode %s into jetstream.StreamConfig: %v", name, err)
	}
	return cfg
}

// runJetStream starts an in-process nats-server with JetStream on a random
// port and returns a JetStream context connected to it.
func runJetStream(t *testing.T) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return testkit.StartNATS(t)
}

func TestStreamFilesDecodeAndCreate(t *testing.T) {
	tests := []struct {
		file         string
		name         string
		subject      string
		replicas     int
		perSubject   int64
		wantDiscard  jetstream.DiscardPolicy
		wantNoMaxAge bool
	}{
		{file: "persons.json", name: "PERSONS", subject: "persons.>", replicas: 1, perSubject: 16, wantDiscard: jetstream.DiscardNew, wantNoMaxAge: true},
		{file: "persons.r3.json", name: "PERSONS", subject: "persons.>", replicas: 3, perSubject: 16, wantDiscard: jetstream.DiscardNew, wantNoMaxAge: true},
		{file: "persons_dlq.json", name: "PERSONS_DLQ", subject: "dlq.persons.>", replicas: 1, perSubject: -1, wantDiscard: jetstream.DiscardOld},
		{file: "persons_dlq.r3.json", name: "PERSONS_DLQ", subject: "dlq.persons.>", replicas: 3, perSubject: -1, wantDiscard: jetstream.DiscardOld},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cfg := loadStreamConfig(t, tt.file)
			if cfg.Name != tt.name {
				t.Errorf("name: got %q, want %q", cfg.Name, tt.name)
			}
			if len(cfg.Subjects) != 1 || cfg.Subjects[0] != tt.subject {
				t.Errorf("subjects: got %v, want [%s]", cfg.Subjects, tt.subject)
			}
			if cfg.Replicas != tt.replicas {
				t.Errorf("num_replicas: got %d, want %d", cfg.Replicas, tt.replicas)
			}
			if cfg.MaxMsgsPerSubject != tt.perSubject {
				t.Errorf("max_msgs_per_subject: got %d, want %d", cfg.MaxMsgsPerSubject, tt.perSubject)
			}
			if cfg.Discard != tt.wantDiscard {
				t.Errorf("discard: got %v, want %v", cfg.Discard, tt.wantDiscard)
			}
			if cfg.Retention != jetstream.LimitsPolicy || cfg.Storage != jetstream.FileStorage {
				t.Errorf("retention/storage: got %v/%v, want limits/file", cfg.Retention, cfg.Storage)
			}
			if tt.wantNoMaxAge && cfg.MaxAge != 0 {
				t.Errorf("max_age: got %v, want 0: the state of an entity must never age out", cfg.MaxAge)
			}
			if cfg.Duplicates <= 0 {
				t.Errorf("duplicate_window: got %v, want > 0 for Nats-Msg-Id dedup", cfg.Duplicates)
			}

			// A single test server holds one replica; the R3 files are created
			// for real by the three-node cluster test of the integration suite.
			cfg.Replicas = 1
			_, js := runJetStream(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s, err := js.CreateStream(ctx, cfg)
			if err != nil {
				t.Fatalf("create stream from %s: %v", tt.file, err)
			}
			// Applying the same file again (a re-run of the one-shot job) is a no-op.
			if _, err := js.CreateStream(ctx, cfg); err != nil {
				t.Fatalf("create stream again from %s: %v", tt.file, err)
			}
			got := s.CachedInfo().Config
			if got.MaxMsgsPerSubject != tt.perSubject || got.Duplicates != cfg.Duplicates || got.MaxBytes != cfg.MaxBytes {
				t.Errorf("server config: got per-subject %d, dup %v, max bytes %d; want %d, %v, %d",
					got.MaxMsgsPerSubject, got.Duplicates, got.MaxBytes, tt.perSubject, cfg.Duplicates, cfg.MaxBytes)
			}
		})
	}
}

// TestReplicatedFilesDifferOnlyInReplicas keeps the R1 and R3 definitions in step.
func TestReplicatedFilesDifferOnlyInReplicas(t *testing.T) {
	for _, pair := range [][2]string{{"persons.json", "persons.r3.json"}, {"persons_dlq.json", "persons_dlq.r3.json"}} {
		t.Run(pair[1], func(t *testing.T) {
			r1, r3 := loadStreamConfig(t, pair[0]), loadStreamConfig(t, pair[1])
			r3.Replicas = r1.Replicas
			a, _ := json.Marshal(r1)
			b, _ := json.Marshal(r3)
			if !bytes.Equal(a, b) {
				t.Errorf("%s and %s differ beyond num_replicas:\n%s\n%s", pair[0], pair[1], a, b)
			}
		})
	}
}

// TestProjectorDLQConfigMatchesFile keeps the dead-letter stream the
// projector creates when it is missing (projector.DLQStreamConfig) and
// deploy/streams/persons_dlq.json in step, replicas aside (operators choose
// them; see persons_dlq.r3.json).
func TestProjectorDLQConfigMatchesFile(t *testing.T) {
	file := loadStreamConfig(t, "persons_dlq.json")
	code := projector.DLQStreamConfig(file.Name)
	code.Replicas = file.Replicas
	a, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(code)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("projector.DLQStreamConfig(%q) and persons_dlq.json differ beyond num_replicas:\nfile: %s\ncode: %s", file.Name, a, b)
	}
}

// TestPersonsStreamCompaction shows the trade-off documented in
// deploy/README.md: the stream keeps the last max_msgs_per_subject events of
// each entity, so the newest state survives late stale publishes (fewer than
// the limit), Nats-Msg-Id duplicates are dropped, and discard "new" on the
// byte limit does not stop per-subject compaction.
func TestPersonsStreamCompaction(t *testing.T) {
	_, js := runJetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := loadStreamConfig(t, "persons.json")
	s, err := js.CreateStream(ctx, cfg)
	if err != nil {
		t.Fatalf("create stream: %v", err)
	}
	const subj = "persons.consumer.6f1c1d3e-0a4b-4c1e-9a53-1d2f3c4b5a69"
	publish := func(id, body string) uint64 {
		t.Helper()
		msg := nats.NewMsg(subj)
		msg.Header.Set(jetstream.MsgIDHeader, id)
		msg.Data = []byte(body)
		ack, err := js.PublishMsg(ctx, msg)
		if err != nil {
			t.Fatalf("publish %s: %v", id, err)
		}
		return ack.Sequence
	}

	t.Run("duplicate Nats-Msg-Id is stored once", func(t *testing.T) {
		a := publish("dup-1", "v1")
		b := publish("dup-1", "v1")
		if a != b {
			t.Errorf("sequence of duplicate: got %d, want %d", b, a)
		}
	})

	t.Run("newest survives stale publishes below the limit", func(t *testing.T) {
		newest := publish("newest", "v100")
		for i := range int(cfg.MaxMsgsPerSubject) - 1 {
			publish(fmt.Sprintf("stale-%d", i), "stale")
		}
		m, err := s.GetMsg(ctx, newest)
		if err != nil {
			t.Fatalf("newest event (seq %d) was evicted after %d stale publishes: %v", newest, cfg.MaxMsgsPerSubject-1, err)
		}
		if string(m.Data) != "v100" {
			t.Errorf("newest data: got %q, want v100", m.Data)
		}
		publish("one-too-many", "stale")
		if _, err := s.GetMsg(ctx, newest); err == nil {
			t.Errorf("newest event still stored after %d later publishes; the limit is %d", cfg.MaxMsgsPerSubject, cfg.MaxMsgsPerSubject)
		}
	})

	t.Run("per-subject count is capped", func(t *testing.T) {
		info, err := s.Info(ctx, jetstream.WithSubjectFilter(subj))
		if err != nil {
			t.Fatalf("info: %v", err)
		}
		if got := info.State.Subjects[subj]; got != uint64(cfg.MaxMsgsPerSubject) {
			t.Errorf("messages kept on %s: got %d, want %d", subj, got, cfg.MaxMsgsPerSubject)
		}
	})
}
