package projector

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/testing/testkit"
)

// generatedStream starts a server whose PERSONS stream holds n events
// generated from seed (the generator seeded with seed, seed+1), and returns
// its JetStream and the events.
func generatedStream(t *testing.T, seed uint64, n int) (jetstream.JetStream, []wireMsg) {
	t.Helper()
	js := setup(t)
	msgs := genStream(t, rand.New(rand.NewPCG(seed, seed+1)), n)
	publishAll(t, js, msgs)
	return js, msgs
}

// projected returns a store holding the projection of js's PERSONS,
// caught up.
func projected(t *testing.T, js jetstream.JetStream, key []byte) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), StoreOptions{EncryptionKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	p := New(js, s, Config{})
	stop := runProjector(t, p)
	waitApplied(t, p, streamLastSeq(t, js), 60*time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	return s
}

func emptyStore(t *testing.T, key []byte) *Store {
	t.Helper()
	s, err := Open(t.TempDir(), StoreOptions{EncryptionKey: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func streamIdent(t *testing.T, js jetstream.JetStream) StreamIdentity {
	t.Helper()
	id, err := LookUpStream(t.Context(), js, "PERSONS")
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		key  []byte
	}{
		{"plain", nil},
		{"encrypted", bytes.Repeat([]byte{7}, 32)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, js := testkit.StartNATS(t)
			createStream(t, js)
			rng := rand.New(rand.NewPCG(11, 12))
			msgs := genStream(t, rng, 3000)
			publishAll(t, js, msgs[:2000])
			a := projected(t, js, tc.key)
			sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: "SNAP", Key: tc.key, Replica: "a"})
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			taken, name, err := sn.Take(ctx, a)
			if err != nil {
				t.Fatalf("Take: %v", err)
			}
			if taken.Position != 2000 || taken.Keys == 0 {
				t.Errorf("taken %+v, want position 2000 and some keys", taken)
			}
			if tc.key != nil {
				raw := objectBytes(t, js, "SNAP", name)
				for _, m := range msgs[:2000] {
					if m.valid && bytes.Contains(raw, []byte(m.ev.ID)) {
						t.Fatalf("an event id is readable in the encrypted snapshot")
					}
				}
			}

			b := emptyStore(t, tc.key)
			got, ok, err := sn.Restore(ctx, b, streamIdent(t, js))
			if err != nil || !ok {
				t.Fatalf("Restore: ok %v, err %v", ok, err)
			}
			if got.Position != taken.Position || got.Keys != taken.Keys {
				t.Errorf("restored %+v, want %+v", got, taken)
			}
			compareState(t, dump(t, b), dump(t, a))

			// The restored model catches up from the snapshot's position.
			publishAll(t, js, msgs[2000:])
			p := New(js, b, Config{})
			stop := runProjector(t, p)
			waitApplied(t, p, 3000, 60*time.Second)
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			want, _, _, _ := reference(msgs)
			compareState(t, dump(t, b), want)
			if applied := p.Progress().Applied + p.Progress().Skipped + p.Progress().DeadLettered; applied != 1000 {
				t.Errorf("processed %d events after the restore, want the 1000 after its position", applied)
			}
		})
	}
}

// objectBytes returns the stored bytes of an object.
func objectBytes(t *testing.T, js jetstream.JetStream, bucket, name string) []byte {
	t.Helper()
	obs, err := js.ObjectStore(t.Context(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	b, err := obs.GetBytes(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSnapshotRefused(t *testing.T) {
	js, msgs := generatedStream(t, 3, 600)
	key := bytes.Repeat([]byte{1}, 32)
	plain := projected(t, js, nil)
	secret := projected(t, js, key)
	ctx := t.Context()
	ident := streamIdent(t, js)

	// good returns the bytes and metadata of a valid snapshot of store.
	good := func(t *testing.T, bucket string, store *Store, key []byte) ([]byte, map[string]string) {
		t.Helper()
		sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		_, name, err := sn.Take(ctx, store)
		if err != nil {
			t.Fatal(err)
		}
		obs, _ := js.ObjectStore(ctx, bucket)
		info, err := obs.GetInfo(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		raw := objectBytes(t, js, bucket, name)
		if err := obs.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
		return raw, info.Metadata
	}

	for _, tc := range []struct {
		name      string
		source    *Store
		takeKey   []byte // key of the snapshot written
		modelKey  []byte // key of the replica restoring
		mangle    func(raw []byte, meta map[string]string) []byte
		wantInLog string
	}{
		{name: "corrupt", source: plain, mangle: func(raw []byte, _ map[string]string) []byte {
			raw[len(raw)/2] ^= 0xff
			return raw
		}, wantInLog: "corrupt"},
		{name: "truncated", source: plain, mangle: func(raw []byte, _ map[string]string) []byte {
			return raw[:len(raw)*2/3]
		}, wantInLog: "corrupt or truncated"},
		{name: "another stream", source: plain, mangle: func(raw []byte, meta map[string]string) []byte {
			meta[metaStream] = "OTHER"
			return raw
		}, wantInLog: `taken of stream \"OTHER\"`},
		{name: "another incarnation", source: plain, mangle: func(raw []byte, meta map[string]string) []byte {
			meta[metaStreamCreated] = "2001-02-03T04:05:06Z"
			return raw
		}, wantInLog: "another incarnation"},
		{name: "another format", source: plain, mangle: func(raw []byte, meta map[string]string) []byte {
			meta[metaModelFormat] = "2"
			return raw
		}, wantInLog: "model format 2"},
		{name: "metadata lies about the position", source: plain, mangle: func(raw []byte, meta map[string]string) []byte {
			meta[metaPosition] = "1"
			return raw
		}, wantInLog: "in its metadata"},
		{name: "wrong key", source: secret, takeKey: bytes.Repeat([]byte{2}, 32), modelKey: key,
			wantInLog: "cannot be decrypted"},
		{name: "encrypted, no key", source: secret, takeKey: key, wantInLog: "cannot be decrypted"},
		{name: "plaintext for an encrypted model", source: plain, modelKey: key, wantInLog: "not encrypted"},
		{name: "altered ciphertext", source: secret, takeKey: key, modelKey: key,
			mangle: func(raw []byte, _ map[string]string) []byte {
				raw[len(raw)-100] ^= 1
				return raw
			}, wantInLog: "corrupt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := "BAD" + strings.NewReplacer(" ", "", ",", "").Replace(tc.name)
			raw, meta := good(t, bucket, tc.source, tc.takeKey)
			if tc.mangle != nil {
				raw = tc.mangle(raw, meta)
			}
			obs, _ := js.ObjectStore(ctx, bucket)
			if _, err := obs.PutBytes(ctx, "bad", raw); err != nil {
				t.Fatal(err)
			}
			if err := obs.UpdateMeta(ctx, "bad", jetstream.ObjectMeta{Name: "bad", Metadata: meta}); err != nil {
				t.Fatal(err)
			}
			logger, logs := testkit.JSONLogger()
			sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: bucket, Key: tc.modelKey, Logger: logger})
			if err != nil {
				t.Fatal(err)
			}
			target := emptyStore(t, tc.modelKey)
			if _, ok, err := sn.Restore(ctx, target, ident); ok || err != nil {
				t.Fatalf("Restore: ok %v, err %v; want a refusal (ok false, no error)", ok, err)
			}
			if !strings.Contains(logs.String(), tc.wantInLog) || !strings.Contains(logs.String(), `"snapshot":"bad"`) {
				t.Errorf("log does not name the snapshot and %q:\n%s", tc.wantInLog, logs)
			}
			if !strings.Contains(logs.String(), "replaying the stream from the start") {
				t.Errorf("log does not say the stream is replayed:\n%s", logs)
			}
			if empty, err := target.Empty(); err != nil || !empty {
				t.Errorf("store after a refused snapshot: empty %v, err %v; want empty", empty, err)
			}
			// The empty store still projects the stream from the start.
			p := New(js, target, Config{})
			stop := runProjector(t, p)
			waitApplied(t, p, uint64(len(msgs)), 30*time.Second)
			_ = stop()
			compareState(t, dump(t, target), dump(t, plain))
		})
	}
}

func TestRestoreRefusesNonEmptyStore(t *testing.T) {
	js, _ := generatedStream(t, 5, 100)
	a := projected(t, js, nil)
	snap, err := a.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var buf bytes.Buffer
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	if _, err := a.RestoreSnapshot(&buf, nil); !errors.Is(err, ErrStoreNotEmpty) {
		t.Errorf("restore into a store with data: err %v, want ErrStoreNotEmpty", err)
	}
	if _, err := emptyStore(t, nil).Snapshot(); !errors.Is(err, ErrNothingToSnapshot) {
		t.Errorf("snapshot of an empty store: err %v, want ErrNothingToSnapshot", err)
	}
}

func TestSnapshotsPruned(t *testing.T) {
	js, _ := generatedStream(t, 7, 50)
	a := projected(t, js, nil)
	sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: "PRUNE", Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for range 4 {
		_, name, err := sn.Take(t.Context(), a)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	obs, _ := js.ObjectStore(t.Context(), "PRUNE")
	list, err := obs.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range list {
		got = append(got, o.Name)
	}
	if len(got) != 2 || !slices.Contains(got, names[3]) || !slices.Contains(got, names[2]) {
		t.Errorf("bucket holds %v, want the newest two of %v", got, names)
	}
}

func TestSnapshotsPurgeOrphanChunks(t *testing.T) {
	js, _ := generatedStream(t, 9, 50)
	a := projected(t, js, nil)
	ctx := t.Context()
	for _, tc := range []struct {
		name      string
		orphanAge time.Duration
		wantKept  bool
	}{
		{"an upload that may be under way is kept", time.Hour, true},
		{"an unfinished upload's chunks are purged once old", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bucket := "ORPHANS" + strconv.FormatBool(tc.wantKept)
			sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: bucket})
			if err != nil {
				t.Fatal(err)
			}
			sn.orphanAge = tc.orphanAge
			if _, _, err := sn.Take(ctx, a); err != nil { // creates the bucket
				t.Fatal(err)
			}
			// The chunks of an upload killed before its description.
			orphan := "$O." + bucket + ".C.killedupload"
			if _, err := js.Publish(ctx, orphan, []byte("chunk")); err != nil {
				t.Fatal(err)
			}
			if _, _, err := sn.Take(ctx, a); err != nil {
				t.Fatal(err)
			}
			stream, err := js.Stream(ctx, "OBJ_"+bucket)
			if err != nil {
				t.Fatal(err)
			}
			_, err = stream.GetLastMsgForSubject(ctx, orphan)
			if kept := err == nil; kept != tc.wantKept {
				t.Errorf("orphan chunks kept: %v (err %v), want %v", kept, err, tc.wantKept)
			}
			// The snapshots themselves are intact.
			if _, ok, err := sn.Restore(ctx, emptyStore(t, nil), streamIdent(t, js)); !ok || err != nil {
				t.Errorf("restore after the purge: ok %v, err %v", ok, err)
			}
		})
	}
}

// TestSnapshotTakeCancelled cancels uploads at points spread over their
// length: each ends with the context's error (or completes, when it was
// faster), never a panic (a transaction discarded under the encoder's open
// iterator), and the next snapshot restores the whole model.
func TestSnapshotTakeCancelled(t *testing.T) {
	_, js := testkit.StartNATS(t)
	createStream(t, js)
	publishAll(t, js, genStream(t, rand.New(rand.NewPCG(21, 22)), 6000))
	a := projected(t, js, nil)
	sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: "SNAP", Replica: "a"})
	if err != nil {
		t.Fatal(err)
	}
	interrupted := 0
	for _, after := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond} {
		t.Run(after.String(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			timer := time.AfterFunc(after, cancel)
			defer timer.Stop()
			_, _, err := sn.Take(ctx, a)
			switch {
			case err == nil:
			case errors.Is(err, context.Canceled):
				interrupted++
			default:
				t.Fatalf("Take cancelled after %v: %v, want nil or context.Canceled", after, err)
			}
		})
	}
	if interrupted == 0 {
		t.Fatal("no upload was interrupted; the test did not test cancellation")
	}
	ctx := t.Context()
	taken, _, err := sn.Take(ctx, a)
	if err != nil {
		t.Fatalf("Take after the cancelled ones: %v", err)
	}
	b := emptyStore(t, nil)
	got, ok, err := sn.Restore(ctx, b, streamIdent(t, js))
	if err != nil || !ok || got.Position != taken.Position {
		t.Fatalf("Restore: %+v ok %v err %v, want position %d", got, ok, err, taken.Position)
	}
	compareState(t, dump(t, b), dump(t, a))
}

// TestRestoreCancelled cancels a restore at points spread over its length:
// each ends with the context's error or completes; an interrupted one
// leaves the store empty, and a restore with a live context then succeeds.
func TestRestoreCancelled(t *testing.T) {
	_, js := testkit.StartNATS(t)
	createStream(t, js)
	publishAll(t, js, genStream(t, rand.New(rand.NewPCG(23, 24)), 6000))
	a := projected(t, js, nil)
	sn, err := NewSnapshots(js, SnapshotsConfig{Bucket: "SNAP", Replica: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sn.Take(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	b := emptyStore(t, nil)
	for _, after := range []time.Duration{0, time.Millisecond, 3 * time.Millisecond, 10 * time.Millisecond} {
		ctx, cancel := context.WithCancel(t.Context())
		timer := time.AfterFunc(after, cancel)
		_, ok, err := sn.Restore(ctx, b, streamIdent(t, js))
		timer.Stop()
		cancel()
		if ok {
			break // faster than the cancellation: nothing left to interrupt
		}
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Restore cancelled after %v: %v, want context.Canceled", after, err)
		}
		if empty, err := b.Empty(); err != nil || !empty {
			t.Fatalf("after an interrupted restore: empty %v (%v), want an empty store", empty, err)
		}
	}
	if empty, _ := b.Empty(); empty {
		if _, ok, err := sn.Restore(t.Context(), b, streamIdent(t, js)); err != nil || !ok {
			t.Fatalf("Restore after the cancelled ones: ok %v err %v", ok, err)
		}
	}
	compareState(t, dump(t, b), dump(t, a))
}
