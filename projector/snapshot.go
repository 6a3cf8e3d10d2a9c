package projector

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/nats-io/nats.go/jetstream"
)

// A snapshot is the whole read model as of one checkpoint, in one stream of
// bytes (compression and encryption are added by Snapshots, around it):
//
//	magic       "lookupd-snapshot" then the container version byte (1)
//	uvarint     model format (the value format byte, formatV1)
//	uvarint     position: the checkpoint's stream sequence
//	8 bytes     the checkpoint event's stream time, big-endian unix nanos
//	uvarint     length of the stream identity, then it (key "m" "stream")
//	records     uvarint key length (> 0), key, uvarint value length, value;
//	            in key order, every key of the store, checkpoint included
//	uvarint     0: the end of the records
//	uvarint     the number of records
//	32 bytes    SHA-256 of every byte before it
//
// It is written from one Badger read transaction, so it is the projection
// of one prefix of the stream, its checkpoint inside. Restoring it checks
// the header, every record and the digest before the restored store
// becomes visible: a truncated or altered snapshot restores nothing.
const (
	snapshotMagic     = "lookupd-snapshot"
	snapshotContainer = 1
)

// Errors of RestoreSnapshot and of Snapshots.Restore, which name the
// snapshot and the reason.
var (
	// ErrSnapshotCorrupt: the snapshot is truncated, altered or not one.
	ErrSnapshotCorrupt = errors.New("snapshot is corrupt or truncated")
	// ErrSnapshotFormat: the snapshot is of another container or model
	// format than this build reads.
	ErrSnapshotFormat = errors.New("snapshot is of another format")
	// ErrSnapshotStream: the snapshot was taken of another stream, or of
	// another incarnation of it.
	ErrSnapshotStream = errors.New("snapshot belongs to another stream")
	// ErrSnapshotKey: the snapshot cannot be decrypted with the read
	// model's key (or is encrypted and no key was given, or the reverse).
	ErrSnapshotKey = errors.New("snapshot cannot be decrypted with the read model's key")
	// ErrNothingToSnapshot: the store has not recorded a stream yet.
	ErrNothingToSnapshot = errors.New("the read model has no checkpoint yet")
	// ErrStoreNotEmpty: RestoreSnapshot was given a store that holds data.
	ErrStoreNotEmpty = errors.New("store is not empty")
)

// SnapshotInfo describes a snapshot: the stream it was taken of and the
// read model's position in it.
type SnapshotInfo struct {
	Stream        string    // stream name
	StreamCreated time.Time // the stream incarnation's creation time
	Position      uint64    // checkpoint: stream sequence of the last processed event
	PositionTime  time.Time // stream time of that event (zero if unknown)
	ModelFormat   int       // value format of the read model
	Keys          int       // records in the snapshot
}

// StreamIdentity names the origin a replica reads (LookUpStream): one
// incarnation of a stream, by its name and creation time
// (jetstream.StreamInfo.Created). When the stream read is a mirror, Name
// is the stream it mirrors, Created is zero (a mirror does not tell its
// origin's creation time) and Mirror names the mirror; a snapshot is then
// matched to the origin by the time of the event at its position, which a
// mirror keeps (docs/decisions/0021-origin-identity.md).
type StreamIdentity struct {
	Name    string
	Created time.Time
	Mirror  string
	// messageTime reads the stream read's message times (nil: a snapshot
	// that needs them to be matched is refused).
	messageTime messageTimeFunc
}

func (si SnapshotInfo) identity() streamIdentity {
	return streamIdentity{name: si.Stream, created: si.StreamCreated}
}

// Of returns an error wrapping ErrSnapshotStream unless the snapshot was
// taken of the origin id (sameOrigin), and one wrapping neither when the
// stream could not be read to tell.
func (si SnapshotInfo) Of(ctx context.Context, id StreamIdentity) error {
	want := streamIdentity{name: id.Name, created: id.Created}
	msgTime := id.messageTime
	if msgTime == nil {
		msgTime = func(context.Context, uint64) (time.Time, error) { return time.Time{}, jetstream.ErrMsgNotFound }
	}
	why, err := sameOrigin(ctx, si.identity(), si.Position, si.PositionTime, want, msgTime)
	if err != nil {
		return err
	}
	if why != "" {
		return fmt.Errorf("%w: taken of stream %s at position %d, this replica reads stream %s: %s",
			ErrSnapshotStream, si.identity(), si.Position, want, why)
	}
	return nil
}

// Snapshot is a consistent view of a store being written out as a
// snapshot: one Badger read transaction, so the projector may go on
// writing meanwhile. Close it when done.
type Snapshot struct {
	store *Store
	txn   *badger.Txn
	// Info is what the snapshot holds (Keys is set by WriteTo).
	Info SnapshotInfo
}

// Snapshot begins a snapshot of the store as it is now. It returns
// ErrNothingToSnapshot when the store has recorded no stream yet.
func (s *Store) Snapshot() (*Snapshot, error) {
	txn := s.db.NewTransaction(false)
	info, err := snapshotHeader(txn)
	if err != nil {
		txn.Discard()
		return nil, fmt.Errorf("snapshot of %s: %w", s.dir, err)
	}
	return &Snapshot{store: s, txn: txn, Info: info}, nil
}

// Close ends the snapshot's read transaction.
func (sn *Snapshot) Close() { sn.txn.Discard() }

// WriteTo writes the snapshot to w (see the format above) and counts its
// records into Info.Keys.
func (sn *Snapshot) WriteTo(w io.Writer) (int64, error) {
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(w, h)}
	bw := bufio.NewWriterSize(cw, 256<<10)
	writeHeader(bw, sn.Info)
	it := sn.txn.NewIterator(badger.IteratorOptions{PrefetchValues: true, PrefetchSize: 256})
	defer it.Close()
	var (
		scratch []byte
		err     error
		keys    int
	)
	for it.Rewind(); it.Valid(); it.Next() {
		item := it.Item()
		if scratch, err = item.ValueCopy(scratch[:0]); err != nil {
			return cw.n, fmt.Errorf("snapshot of %s: %w", sn.store.dir, err)
		}
		writeBytes(bw, item.Key())
		writeBytes(bw, scratch)
		keys++
		if cw.err != nil { // the reader went away (an upload cancelled): stop iterating now
			return cw.n, fmt.Errorf("snapshot of %s: %w", sn.store.dir, cw.err)
		}
	}
	writeUvarint(bw, 0)
	writeUvarint(bw, uint64(keys)) //nolint:gosec // G115: a count
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("snapshot of %s: %w", sn.store.dir, err)
	}
	if _, err := w.Write(h.Sum(nil)); err != nil {
		return cw.n, fmt.Errorf("snapshot of %s: %w", sn.store.dir, err)
	}
	sn.Info.Keys = keys
	return cw.n + sha256.Size, nil
}

// countWriter counts the bytes written through it, and keeps the first
// error of a write.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// snapshotHeader reads the checkpoint and stream identity within txn.
func snapshotHeader(txn *badger.Txn) (SnapshotInfo, error) {
	info := SnapshotInfo{ModelFormat: formatV1}
	item, err := txn.Get(keyStream)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return info, ErrNothingToSnapshot
	}
	if err != nil {
		return info, err
	}
	v, err := item.ValueCopy(nil)
	if err != nil {
		return info, err
	}
	id, err := decodeIdentity(v)
	if err != nil {
		return info, err
	}
	info.Stream, info.StreamCreated = id.name, id.created
	if item, err = txn.Get(keyCheckpoint); err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
		return info, err
	}
	if err == nil {
		if v, err = item.ValueCopy(nil); err != nil {
			return info, err
		}
		if info.Position, info.PositionTime, err = decodeCheckpoint(v); err != nil {
			return info, err
		}
	}
	return info, nil
}

// writeHeader, writeUvarint and writeBytes write to a bufio.Writer, which
// keeps the first error and returns it from Flush (checked by WriteTo).
func writeHeader(w *bufio.Writer, info SnapshotInfo) {
	_, _ = w.WriteString(snapshotMagic)
	_ = w.WriteByte(snapshotContainer)
	writeUvarint(w, uint64(info.ModelFormat)) //nolint:gosec // G115: a small positive format number
	writeUvarint(w, info.Position)
	var t [8]byte
	if !info.PositionTime.IsZero() {
		binary.BigEndian.PutUint64(t[:], uint64(info.PositionTime.UnixNano()))
	}
	_, _ = w.Write(t[:])
	writeBytes(w, encodeIdentity(info.identity()))
}

func writeUvarint(w *bufio.Writer, n uint64) {
	var b [binary.MaxVarintLen64]byte
	_, _ = w.Write(b[:binary.PutUvarint(b[:], n)])
}

func writeBytes(w *bufio.Writer, p []byte) {
	writeUvarint(w, uint64(len(p)))
	_, _ = w.Write(p)
}
