package projector

import (
	"cmp"
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/minio/sio"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"

	"github.com/lookup/persons/internal/crash"
)

// Metadata of a snapshot object, named so that `nats object info` tells
// an operator what a snapshot is without reading it.
const (
	metaStream        = "stream"
	metaStreamCreated = "stream-created"
	metaModelFormat   = "model-format"
	metaPosition      = "position"
	metaEncrypted     = "encrypted"
	metaReplica       = "replica"
	metaKeyID         = "key-id"
)

// SnapshotsConfig configures Snapshots.
type SnapshotsConfig struct {
	// Bucket is the JetStream Object Store bucket, created when missing.
	Bucket string
	// Keep is how many snapshots of the stream the bucket keeps: after a
	// snapshot is stored, older ones beyond the newest Keep are deleted.
	// Default 3.
	Keep int
	// Key is the read model's encryption key (nil: the read model is not
	// encrypted). Snapshots are then encrypted (AES-256-GCM, DARE format)
	// with a key derived from it, and a snapshot that is not encrypted with
	// it is refused: protected data is never plaintext in the bucket, and
	// only a holder of the key can have written a snapshot restored.
	Key []byte
	// Replica names the replica in the snapshots' metadata.
	Replica string
	// Logger receives what Restore refuses and why. nil: discard.
	Logger *slog.Logger
}

// Snapshots writes snapshots of a read model to a JetStream Object Store
// bucket and restores them: compressed (zstd), encrypted when the read
// model is, with metadata naming the stream, its identity, the model
// format and the position.
type Snapshots struct {
	js  jetstream.JetStream
	cfg SnapshotsConfig
	// orphanAge is how old the chunks of an upload that no object names
	// must be before prune purges them (younger ones may be another
	// replica's upload under way).
	orphanAge time.Duration
	key       []byte // derived snapshot key, nil when not encrypted
	keyID     string // names the key without revealing it (metadata key-id)
	logger    *slog.Logger
}

// NewSnapshots returns the snapshots of cfg.Bucket over js.
func NewSnapshots(js jetstream.JetStream, cfg SnapshotsConfig) (*Snapshots, error) {
	if cfg.Keep <= 0 {
		cfg.Keep = 3
	}
	sn := &Snapshots{js: js, cfg: cfg, logger: cfg.Logger, orphanAge: time.Hour}
	if sn.logger == nil {
		sn.logger = slog.New(slog.DiscardHandler)
	}
	sn.logger = sn.logger.With("component", "snapshots", "bucket", cfg.Bucket)
	if cfg.Key != nil {
		k, err := hkdf.Key(sha256.New, cfg.Key, nil, "lookupd read model snapshot v1", 32)
		if err != nil {
			return nil, fmt.Errorf("snapshot key: %w", err)
		}
		sn.key = k
		id := hmac.New(sha256.New, k)
		id.Write([]byte("key id"))
		sn.keyID = hex.EncodeToString(id.Sum(nil)[:8])
	}
	return sn, nil
}

// Bucket returns the bucket's name.
func (sn *Snapshots) Bucket() string { return sn.cfg.Bucket }

// bucket returns the object store, created when missing.
func (sn *Snapshots) bucket(ctx context.Context) (jetstream.ObjectStore, error) {
	obs, err := sn.js.ObjectStore(ctx, sn.cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		obs, err = sn.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: sn.cfg.Bucket,
			Description: "lookupd read model snapshots (docs/operations.md)", Storage: jetstream.FileStorage})
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = sn.js.ObjectStore(ctx, sn.cfg.Bucket)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot bucket %q: %w", sn.cfg.Bucket, err)
	}
	return obs, nil
}

// Take writes a snapshot of store to the bucket, then deletes the
// snapshots of the same stream beyond the newest Keep. It returns what the
// snapshot holds and its object name. A snapshot is visible in the bucket
// only once whole (the Object Store publishes its description last); a
// failed or interrupted upload leaves none.
func (sn *Snapshots) Take(ctx context.Context, store *Store) (SnapshotInfo, string, error) {
	obs, err := sn.bucket(ctx)
	if err != nil {
		return SnapshotInfo{}, "", err
	}
	snap, err := store.Snapshot()
	if err != nil {
		return SnapshotInfo{}, "", err
	}
	defer snap.Close()
	info := snap.Info
	name := fmt.Sprintf("%s-%020d-%s", info.Stream, info.Position, nuid.Next())
	pr, pw := io.Pipe()
	encoded := make(chan struct{})
	go func() {
		defer close(encoded)
		defer crash.Guard()
		pw.CloseWithError(sn.encode(pw, snap))
	}()
	// The encoder iterates over snap's transaction: it must have returned
	// (its iterator closed) before snap.Close discards the transaction,
	// whatever ended the upload (Badger panics on a transaction discarded
	// under an open iterator).
	defer func() { <-encoded }()
	meta := jetstream.ObjectMeta{Name: name, Description: "lookupd read model snapshot", Metadata: map[string]string{
		metaStream: info.Stream, metaStreamCreated: info.StreamCreated.UTC().Format(time.RFC3339Nano),
		metaModelFormat: strconv.Itoa(info.ModelFormat), metaPosition: strconv.FormatUint(info.Position, 10),
		metaEncrypted: strconv.FormatBool(sn.key != nil), metaReplica: sn.cfg.Replica}}
	if sn.key != nil {
		meta.Metadata[metaKeyID] = sn.keyID
	}
	sn.logger.Info("writing snapshot", "bucket", sn.cfg.Bucket, "snapshot", name, "position", info.Position)
	_, err = obs.Put(ctx, meta, pr)
	if ctx.Err() != nil {
		// nats.go reports a context cancelled during Put's final wait as
		// nats.ErrTimeout; the caller needs to know it was its own stop.
		err = ctx.Err()
	}
	// Stops the encoder if Put gave up early (its next write fails); an
	// interrupted upload leaves chunks that no object names, purged by
	// the next snapshot (purgeOrphans).
	pr.CloseWithError(errOr(err, io.ErrClosedPipe))
	<-encoded
	if err != nil {
		return info, "", fmt.Errorf("store snapshot %s in bucket %q: %w", name, sn.cfg.Bucket, err)
	}
	info = snap.Info // with Keys, now that it is written
	if err := sn.prune(ctx, obs, info.Stream); err != nil {
		sn.logger.Warn("old snapshots not pruned", "err", err)
	}
	return info, name, nil
}

// encode writes snap compressed, and encrypted when a key is set, to w.
func (sn *Snapshots) encode(w io.Writer, snap *Snapshot) error {
	var ew io.WriteCloser = nopCloser{w}
	if sn.key != nil {
		var err error
		if ew, err = sio.EncryptWriter(w, sio.Config{MinVersion: sio.Version20, Key: sn.key}); err != nil {
			return err
		}
	}
	zw, err := zstd.NewWriter(ew, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		return err
	}
	if _, err := snap.WriteTo(zw); err != nil {
		zw.Close()
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return ew.Close()
}

// errOr returns err, or def when err is nil.
func errOr(err, def error) error {
	if err != nil {
		return err
	}
	return def
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// prune deletes the snapshots of stream beyond the newest Keep.
func (sn *Snapshots) prune(ctx context.Context, obs jetstream.ObjectStore, stream string) error {
	all, err := obs.List(ctx)
	if err != nil {
		return err
	}
	var mine []*jetstream.ObjectInfo
	for _, o := range all {
		if !o.Deleted && o.Metadata[metaStream] == stream {
			mine = append(mine, o)
		}
	}
	slices.SortFunc(mine, func(a, b *jetstream.ObjectInfo) int { return b.ModTime.Compare(a.ModTime) })
	for _, o := range mine[min(sn.cfg.Keep, len(mine)):] {
		if err := obs.Delete(ctx, o.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return fmt.Errorf("delete snapshot %s: %w", o.Name, err)
		}
		sn.logger.Info("old snapshot deleted", "snapshot", o.Name)
	}
	return sn.purgeOrphans(ctx, all)
}

// purgeOrphans purges the chunks of uploads that no object names (an
// upload cut short by a crash leaves its chunks, which the Object Store
// never removes) once they are older than orphanAge.
func (sn *Snapshots) purgeOrphans(ctx context.Context, objects []*jetstream.ObjectInfo) error {
	stream, err := sn.js.Stream(ctx, "OBJ_"+sn.cfg.Bucket)
	if err != nil {
		return err
	}
	prefix := "$O." + sn.cfg.Bucket + ".C."
	info, err := stream.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	if err != nil {
		return err
	}
	named := make(map[string]bool, len(objects))
	for _, o := range objects {
		named[prefix+o.NUID] = true
	}
	for subject := range info.State.Subjects {
		if named[subject] {
			continue
		}
		last, err := stream.GetLastMsgForSubject(ctx, subject)
		if err != nil || time.Since(last.Time) < sn.orphanAge {
			continue // gone meanwhile, or maybe an upload under way
		}
		if err := stream.Purge(ctx, jetstream.WithPurgeSubject(subject)); err != nil {
			return fmt.Errorf("purge the chunks of an unfinished upload: %w", err)
		}
		sn.logger.Info("chunks of an unfinished snapshot upload purged", "subject", subject)
	}
	return nil
}

// A StoredSnapshot is a snapshot in the bucket, as its metadata names it.
type StoredSnapshot struct {
	Name     string
	Position uint64    // the stream sequence it holds the model at
	Stored   time.Time // when the bucket stored it
}

// Stored lists the bucket's snapshots of stream, at any position, newest
// position first. A bucket that does not exist holds none.
func (sn *Snapshots) Stored(ctx context.Context, stream string) ([]StoredSnapshot, error) {
	obs, err := sn.js.ObjectStore(ctx, sn.cfg.Bucket)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot bucket %q: %w", sn.cfg.Bucket, err)
	}
	all, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot bucket %q: %w", sn.cfg.Bucket, err)
	}
	var out []StoredSnapshot
	for _, o := range all {
		if o.Deleted || o.Metadata[metaStream] != stream {
			continue
		}
		pos, _ := strconv.ParseUint(o.Metadata[metaPosition], 10, 64)
		out = append(out, StoredSnapshot{Name: o.Name, Position: pos, Stored: o.ModTime})
	}
	slices.SortFunc(out, func(a, b StoredSnapshot) int {
		if c := cmp.Compare(b.Position, a.Position); c != 0 {
			return c
		}
		return b.Stored.Compare(a.Stored)
	})
	return out, nil
}

// DeleteBefore deletes the bucket's snapshots of stream taken at a
// position lower than position (their chunks are purged with them) and
// returns how many it deleted. It is idempotent.
func (sn *Snapshots) DeleteBefore(ctx context.Context, stream string, position uint64) (int, error) {
	stored, err := sn.Stored(ctx, stream)
	if err != nil || len(stored) == 0 {
		return 0, err
	}
	obs, err := sn.js.ObjectStore(ctx, sn.cfg.Bucket)
	if err != nil {
		return 0, fmt.Errorf("snapshot bucket %q: %w", sn.cfg.Bucket, err)
	}
	n := 0
	for _, s := range stored {
		if s.Position >= position {
			continue
		}
		if err := obs.Delete(ctx, s.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return n, fmt.Errorf("delete snapshot %s: %w", s.Name, err)
		}
		sn.logger.Info("snapshot older than an erased deletion deleted", "snapshot", s.Name, "position", s.Position)
		n++
	}
	return n, nil
}
