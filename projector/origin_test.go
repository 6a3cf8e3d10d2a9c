package projector

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
)

// projectFrom runs a projector over stream into s until it has applied
// seq, then stops it.
func projectFrom(t *testing.T, js jetstream.JetStream, s *Store, stream string, seq uint64) {
	t.Helper()
	p := New(js, s, Config{Stream: stream})
	stop := runProjector(t, p)
	waitApplied(t, p, seq, 20*time.Second)
	if err := stop(); err != nil {
		t.Fatalf("Run over %s: %v", stream, err)
	}
	s.ident = nil // as after a restart
}

// mirrorOf creates, on the same server, the stream name mirroring origin
// whole, and waits until it holds the origin's last sequence.
func mirrorOf(t *testing.T, js jetstream.JetStream, name, origin string) {
	t.Helper()
	createMirror(t, js, name, &jetstream.StreamSource{Name: origin})
	s, err := js.Stream(t.Context(), origin)
	if err != nil {
		t.Fatal(err)
	}
	waitMirrored(t, js, name, s.CachedInfo().State.LastSeq)
}

// recreatePersons deletes PERSONS and creates it again holding n events:
// another incarnation, with other stream times at the same sequences.
func recreatePersons(t *testing.T, js jetstream.JetStream, n int) {
	t.Helper()
	if err := js.DeleteStream(t.Context(), "PERSONS"); err != nil {
		t.Fatal(err)
	}
	createStream(t, js)
	publishAll(t, js, consumerMsgs(t, n))
}

// TestMirrorOfTheSameOrigin: a read model is bound to its origin, not to
// the stream it reads (docs/decisions/0021-origin-identity.md): a model
// built from PERSONS goes on from a mirror of it, and one built from a
// mirror goes on from PERSONS itself, learning its creation time.
func TestMirrorOfTheSameOrigin(t *testing.T) {
	ctx := t.Context()
	t.Run("built from the origin, read through its mirror", func(t *testing.T) {
		js := setup(t)
		publishAll(t, js, consumerMsgs(t, 10))
		s := openStore(t, t.TempDir(), StoreOptions{})
		projectFrom(t, js, s, "PERSONS", 10)
		mirrorOf(t, js, "PERSONS_M", "PERSONS")
		publishAll(t, js, consumerMsgs(t, 3))
		waitMirrored(t, js, "PERSONS_M", 13)
		projectFrom(t, js, s, "PERSONS_M", 13)
		id, ok, err := s.streamIdentity()
		created := mustStream(t, js).CachedInfo().Created
		if err != nil || !ok || !id.equal(streamIdentity{name: "PERSONS", created: created}) {
			t.Errorf("identity = %v, %v, %v; want PERSONS created %v kept", id, ok, err, created)
		}
	})
	t.Run("built from a mirror, read from the origin", func(t *testing.T) {
		js := setup(t)
		publishAll(t, js, consumerMsgs(t, 10))
		mirrorOf(t, js, "PERSONS_M", "PERSONS")
		s := openStore(t, t.TempDir(), StoreOptions{})
		projectFrom(t, js, s, "PERSONS_M", 10)
		if id, ok, err := s.streamIdentity(); err != nil || !ok || !id.equal(streamIdentity{name: "PERSONS"}) {
			t.Errorf("identity from the mirror = %v, %v, %v; want PERSONS, creation time unknown", id, ok, err)
		}
		publishAll(t, js, consumerMsgs(t, 3))
		projectFrom(t, js, s, "PERSONS", 13)
		id, ok, err := s.streamIdentity()
		created := mustStream(t, js).CachedInfo().Created
		if err != nil || !ok || !id.equal(streamIdentity{name: "PERSONS", created: created}) {
			t.Errorf("identity = %v, %v, %v; want PERSONS created %v learnt", id, ok, err, created)
		}
	})
	t.Run("LookUpStream names the origin", func(t *testing.T) {
		js := setup(t)
		publishAll(t, js, consumerMsgs(t, 2))
		mirrorOf(t, js, "PERSONS_M", "PERSONS")
		id, err := LookUpStream(ctx, js, "PERSONS_M")
		if err != nil || id.Name != "PERSONS" || id.Mirror != "PERSONS_M" || !id.Created.IsZero() {
			t.Errorf("LookUpStream(PERSONS_M) = %+v, %v; want origin PERSONS through mirror PERSONS_M, no creation time", id, err)
		}
	})
}

// TestMirrorOfAnotherOrigin: a model refuses a mirror of another stream,
// or of another incarnation of its own, and a model built from a mirror
// refuses a re-created origin, with ErrStreamMismatch naming both; nothing
// is projected.
func TestMirrorOfAnotherOrigin(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name string
		// prepare builds the store and changes the server; it returns the
		// stream the projector then reads.
		prepare func(t *testing.T, js jetstream.JetStream, s *Store) string
		want    []string
	}{
		{
			name: "a mirror of another stream",
			prepare: func(t *testing.T, js jetstream.JetStream, s *Store) string {
				publishAll(t, js, consumerMsgs(t, 10))
				projectFrom(t, js, s, "PERSONS", 10)
				if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OTHER", Subjects: []string{"other.>"}}); err != nil {
					t.Fatal(err)
				}
				for range 30 {
					if _, err := js.Publish(ctx, "other.x", []byte("{}")); err != nil {
						t.Fatal(err)
					}
				}
				mirrorOf(t, js, "OTHER_M", "OTHER")
				return "OTHER_M"
			},
			want: []string{`records stream "PERSONS" created`, `found stream "OTHER" (creation time unknown) through its mirror "OTHER_M"`, "another stream"},
		},
		{
			name: "a mirror of another incarnation of the origin",
			prepare: func(t *testing.T, js jetstream.JetStream, s *Store) string {
				publishAll(t, js, consumerMsgs(t, 10))
				projectFrom(t, js, s, "PERSONS", 10)
				recreatePersons(t, js, 12)
				mirrorOf(t, js, "PERSONS_M", "PERSONS")
				return "PERSONS_M"
			},
			want: []string{"checkpoint 10", "event 10 was published at", "another incarnation or another origin"},
		},
		{
			name: "built from a mirror, the origin re-created",
			prepare: func(t *testing.T, js jetstream.JetStream, s *Store) string {
				publishAll(t, js, consumerMsgs(t, 10))
				mirrorOf(t, js, "PERSONS_M", "PERSONS")
				projectFrom(t, js, s, "PERSONS_M", 10)
				recreatePersons(t, js, 12)
				return "PERSONS"
			},
			want: []string{`records stream "PERSONS" (creation time unknown)`, "another incarnation or another origin"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := setup(t)
			s := openStore(t, t.TempDir(), StoreOptions{})
			stream := tc.prepare(t, js, s)
			before, err := s.Checkpoint()
			if err != nil {
				t.Fatal(err)
			}
			p := New(js, s, Config{Stream: stream})
			checkMismatch(t, p, s, before, tc.want...)
		})
	}
}

// TestUnsupportedStream: a stream that sources PERSONS numbers its events
// anew, and a mirror of a part of PERSONS lacks events: both are refused,
// by Run and LookUpStream alike, with ErrUnsupportedStream (not a mismatch:
// rebuilding would not help), whatever the store holds.
func TestUnsupportedStream(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		name string
		cfg  jetstream.StreamConfig
		want string
	}{
		{"a stream sourcing PERSONS", jetstream.StreamConfig{Name: "PERSONS_S", Sources: []*jetstream.StreamSource{{Name: "PERSONS"}}},
			`stream "PERSONS_S" sources other streams`},
		{"a mirror of a part of PERSONS", jetstream.StreamConfig{Name: "PERSONS_F",
			Mirror: &jetstream.StreamSource{Name: "PERSONS", FilterSubject: "persons.consumer.>"}},
			`stream "PERSONS_F" mirrors only part of "PERSONS"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			js := setup(t)
			publishAll(t, js, consumerMsgs(t, 4))
			if _, err := js.CreateStream(ctx, tc.cfg); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, t.TempDir(), StoreOptions{})
			p := New(js, s, Config{Stream: tc.cfg.Name})
			err := runUntilError(t, p)
			if !errors.Is(err, ErrUnsupportedStream) || errors.Is(err, ErrStreamMismatch) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Run err = %v, want ErrUnsupportedStream (only) saying %q", err, tc.want)
			}
			if empty, err := s.Empty(); err != nil || !empty {
				t.Errorf("store: empty %v, err %v; want nothing recorded", empty, err)
			}
			if _, err := LookUpStream(ctx, js, tc.cfg.Name); !errors.Is(err, ErrUnsupportedStream) {
				t.Errorf("LookUpStream err = %v, want ErrUnsupportedStream", err)
			}
		})
	}
}

// TestSnapshotAcrossMirror: a snapshot taken in the origin's region
// restores into a replica reading a mirror of the same origin (and that
// replica catches up from the mirror to the same model); one taken of
// another incarnation of the origin is passed over.
func TestSnapshotAcrossMirror(t *testing.T) {
	ctx := t.Context()
	t.Run("same origin", func(t *testing.T) {
		js, _ := generatedStream(t, 11, 400)
		origin := projected(t, js, nil)
		sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: "SNAP", Replica: "region-a"})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := sn.Take(ctx, origin); err != nil {
			t.Fatal(err)
		}
		mirrorOf(t, js, "PERSONS_M", "PERSONS")
		want, err := LookUpStream(ctx, js, "PERSONS_M")
		if err != nil {
			t.Fatal(err)
		}
		b := emptyStore(t, nil)
		info, ok, err := sn.Restore(ctx, b, want)
		if err != nil || !ok || info.Position != 400 {
			t.Fatalf("Restore for the mirror: %+v, ok %v, err %v; want position 400 restored", info, ok, err)
		}
		publishAll(t, js, consumerMsgs(t, 5))
		waitMirrored(t, js, "PERSONS_M", 405)
		projectFrom(t, js, b, "PERSONS_M", 405)
		projectFrom(t, js, origin, "PERSONS", 405)
		compareState(t, dump(t, b), dump(t, origin))
	})
	t.Run("another incarnation", func(t *testing.T) {
		js, _ := generatedStream(t, 12, 200)
		old := projected(t, js, nil)
		logger, logs := testkit.JSONLogger()
		sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: "SNAP", Replica: "region-a", Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := sn.Take(ctx, old); err != nil {
			t.Fatal(err)
		}
		recreatePersons(t, js, 250)
		mirrorOf(t, js, "PERSONS_M", "PERSONS")
		want, err := LookUpStream(ctx, js, "PERSONS_M")
		if err != nil {
			t.Fatal(err)
		}
		b := emptyStore(t, nil)
		if _, ok, err := sn.Restore(ctx, b, want); ok || err != nil {
			t.Fatalf("Restore: ok %v, err %v; want the snapshot refused", ok, err)
		}
		if !strings.Contains(logs.String(), "another incarnation or another origin") {
			t.Errorf("log does not say why the snapshot was refused:\n%s", logs)
		}
		if empty, err := b.Empty(); err != nil || !empty {
			t.Errorf("store: empty %v, err %v; want empty", empty, err)
		}
	})
}
