package projector

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/minio/sio"
	"github.com/nats-io/nats.go/jetstream"
)

// restoreTimeout bounds the download and restore of one snapshot when the
// caller's context has no deadline.
const restoreTimeout = 30 * time.Minute

// LookUpStream returns the identity of the origin the stream name carries,
// as Restore wants it: the stream's own for a stream that is not a mirror,
// the mirrored stream's for a mirror (originOf); an error wrapping
// ErrUnsupportedStream for a stream that sources others or mirrors a part.
func LookUpStream(ctx context.Context, js jetstream.JetStream, name string) (StreamIdentity, error) {
	s, err := js.Stream(ctx, name)
	if err != nil {
		return StreamIdentity{}, fmt.Errorf("look up stream %q: %w", name, err)
	}
	org, err := originOf(s.CachedInfo())
	if err != nil {
		return StreamIdentity{}, err
	}
	return StreamIdentity{Name: org.id.name, Created: org.id.created, Mirror: org.mirror, messageTime: streamMessageTime(s)}, nil
}

// Restore restores into store, which must be empty, the newest snapshot
// of the bucket taken of the stream incarnation want with this build's
// model format, and returns what it held; ok is false when none was
// restored (the store is then still empty: replay the stream from the
// start). Snapshots of other streams, incarnations or formats are passed
// over, each with a log line saying why. A candidate that fails (corrupt,
// truncated, undecryptable with the key, not what its metadata says) is
// refused with an error log line naming it and the reason, and the next
// older one is tried. The error is for a bucket that cannot be read.
func (sn *Snapshots) Restore(ctx context.Context, store *Store, want StreamIdentity) (info SnapshotInfo, ok bool, err error) {
	obs, err := sn.bucket(ctx)
	if err != nil {
		return info, false, err
	}
	all, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		sn.logger.Info("no snapshot in the bucket; replaying the stream from the start")
		return info, false, nil
	}
	if err != nil {
		return info, false, fmt.Errorf("list snapshot bucket %q: %w", sn.cfg.Bucket, err)
	}
	candidates := sn.candidates(all, want)
	for _, o := range candidates {
		start := time.Now()
		info, err = sn.restoreOne(ctx, obs, o, store, want)
		if err == nil {
			sn.logger.Info("read model restored from snapshot", "snapshot", o.Name, "position", info.Position,
				"keys", info.Keys, "bytes", o.Size, "duration", time.Since(start))
			return info, true, nil
		}
		if ctx.Err() != nil {
			return info, false, ctx.Err()
		}
		sn.logger.Error("snapshot refused", "snapshot", o.Name, "reason", err)
	}
	sn.logger.Info("no usable snapshot in the bucket; replaying the stream from the start",
		"candidates", len(candidates), "objects", len(all))
	return SnapshotInfo{}, false, nil
}

// candidates returns the objects whose metadata says they are snapshots of
// want in this model format, newest position first; it logs why the
// others are passed over.
func (sn *Snapshots) candidates(all []*jetstream.ObjectInfo, want StreamIdentity) []*jetstream.ObjectInfo {
	var out []*jetstream.ObjectInfo
	for _, o := range all {
		if o.Deleted {
			continue
		}
		var why string
		created, cerr := time.Parse(time.RFC3339Nano, o.Metadata[metaStreamCreated])
		switch {
		case o.Metadata[metaStream] != want.Name:
			why = fmt.Sprintf("taken of stream %q, this replica reads %q", o.Metadata[metaStream], want.Name)
		case cerr != nil:
			why = fmt.Sprintf("unreadable stream creation time %q", o.Metadata[metaStreamCreated])
		case !created.IsZero() && !want.Created.IsZero() && !created.Equal(want.Created):
			why = fmt.Sprintf("taken of another incarnation of the stream (created %s, the stream now was created %s)",
				o.Metadata[metaStreamCreated], want.Created.UTC().Format(time.RFC3339Nano))
		case o.Metadata[metaModelFormat] != strconv.Itoa(formatV1):
			why = fmt.Sprintf("model format %s, this build reads %d", o.Metadata[metaModelFormat], formatV1)
		}
		if why != "" {
			sn.logger.Info("snapshot passed over", "snapshot", o.Name, "reason", why)
			continue
		}
		out = append(out, o)
	}
	slices.SortStableFunc(out, func(a, b *jetstream.ObjectInfo) int {
		pa, _ := strconv.ParseUint(a.Metadata[metaPosition], 10, 64)
		pb, _ := strconv.ParseUint(b.Metadata[metaPosition], 10, 64)
		if pa != pb {
			if pa > pb {
				return -1
			}
			return 1
		}
		return b.ModTime.Compare(a.ModTime)
	})
	return out
}

// restoreOne restores the snapshot o into store; on error the store is
// left empty.
func (sn *Snapshots) restoreOne(ctx context.Context, obs jetstream.ObjectStore, o *jetstream.ObjectInfo, store *Store,
	want StreamIdentity) (SnapshotInfo, error) {
	encrypted := o.Metadata[metaEncrypted] == "true"
	switch {
	case encrypted && sn.key == nil:
		return SnapshotInfo{}, fmt.Errorf("%w: the snapshot is encrypted and the read model has no key", ErrSnapshotKey)
	case !encrypted && sn.key != nil:
		return SnapshotInfo{}, fmt.Errorf("%w: the snapshot is not encrypted and the read model is", ErrSnapshotKey)
	case encrypted && o.Metadata[metaKeyID] != sn.keyID:
		return SnapshotInfo{}, fmt.Errorf("%w: the snapshot is encrypted with another key (key id %q, this replica's %q)",
			ErrSnapshotKey, o.Metadata[metaKeyID], sn.keyID)
	}
	f, err := sn.download(ctx, obs, o.Name, store.dir+downloadSuffix)
	if err != nil {
		return SnapshotInfo{}, err
	}
	defer func() { f.Close(); os.Remove(f.Name()) }()
	var r io.Reader = bufio.NewReaderSize(ctxReader{ctx: ctx, r: f}, 1<<20)
	if sn.key != nil {
		dr, err := sio.DecryptReader(r, sio.Config{MinVersion: sio.Version20, Key: sn.key})
		if err != nil {
			return SnapshotInfo{}, fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
		}
		r = &decryptErrors{r: dr}
	}
	zr, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(2))
	if err != nil {
		return SnapshotInfo{}, fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
	}
	defer zr.Close()
	return store.RestoreSnapshot(zr, func(info SnapshotInfo) error {
		if err := info.Of(ctx, want); err != nil {
			return err
		}
		if p := o.Metadata[metaPosition]; p != strconv.FormatUint(info.Position, 10) {
			return fmt.Errorf("%w: position %d inside, %s in its metadata", ErrSnapshotCorrupt, info.Position, p)
		}
		return nil
	})
}

// downloadSuffix names the file a snapshot is downloaded to, beside the
// model directory it is restored into (internal/replica's layout removes
// both when it removes an unfinished model).
const downloadSuffix = ".download"

// download copies the snapshot name to the file path and returns it open
// at its start. The snapshot is downloaded whole before it is restored, so
// that the restore's pace never holds chunks in memory or the Object
// Store's subscription open; the file holds the snapshot as stored
// (compressed, and encrypted when the model is).
func (sn *Snapshots) download(ctx context.Context, obs jetstream.ObjectStore, name, path string) (*os.File, error) {
	// Without a deadline the Object Store gives the whole download the
	// JetStream API's default timeout (5s): too short for a large model.
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, restoreTimeout)
		defer cancel()
	}
	res, err := obs.Get(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("read snapshot: %w", err)
	}
	defer res.Close()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600) //nolint:gosec // G304: beside the model directory
	if err != nil {
		return nil, fmt.Errorf("download snapshot: %w", err)
	}
	if _, err := io.Copy(f, res); err != nil { // the Object Store checks its digest at the end
		f.Close()
		os.Remove(path)
		if errors.Is(err, jetstream.ErrDigestMismatch) {
			return nil, fmt.Errorf("%w: download: %w", ErrSnapshotCorrupt, err)
		}
		return nil, fmt.Errorf("download snapshot: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("download snapshot: %w", err)
	}
	return f, nil
}

// decryptErrors marks a decryption failure as corruption: the key was
// checked by its id before, so a package that does not authenticate was
// altered or cut short.
type decryptErrors struct{ r io.Reader }

func (d *decryptErrors) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
	}
	return n, err
}

// ctxReader reads r until ctx is done, then fails with ctx's error: a
// restore stops within one read of a shutdown (the store is then emptied
// again, and the model directory removed by the caller or the next Open).
type ctxReader struct {
	ctx context.Context //nolint:containedctx // a reader's lifetime is its caller's call
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
