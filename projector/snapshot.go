package projector

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"io"
	"math"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/pb"
	"github.com/dgraph-io/ristretto/v2/z"
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

// restoreBatch is the size of the buffers handed to Badger's StreamWriter.
const restoreBatch = 512 << 10

// RestoreSnapshot loads a snapshot read from r into the store, which must
// be empty (ErrStoreNotEmpty otherwise), and returns what it held. check,
// when not nil, is given the snapshot's header before anything is written;
// an error it returns refuses the snapshot. The snapshot's header, records
// and digest are all checked before the restored data becomes visible
// (Badger's StreamWriter, flushed only then); on any error the store is
// left empty. Errors wrap ErrSnapshotCorrupt or ErrSnapshotFormat, or are
// check's.
func (s *Store) RestoreSnapshot(r io.Reader, check func(SnapshotInfo) error) (SnapshotInfo, error) {
	if empty, err := s.Empty(); err != nil {
		return SnapshotInfo{}, err
	} else if !empty {
		return SnapshotInfo{}, fmt.Errorf("restore into %s: %w", s.dir, ErrStoreNotEmpty)
	}
	sr := &snapshotReader{r: bufio.NewReaderSize(r, 256<<10), h: sha256.New()}
	info, err := sr.header()
	if err == nil && check != nil {
		err = check(info)
	}
	if err != nil {
		return info, err
	}
	sw := s.db.NewStreamWriter()
	if err := sw.Prepare(); err != nil {
		return info, fmt.Errorf("restore into %s: %w", s.dir, err)
	}
	if err := sr.records(sw, &info); err != nil {
		sw.Cancel()
		if derr := s.db.DropAll(); derr != nil {
			err = errors.Join(err, fmt.Errorf("empty %s again: %w", s.dir, derr))
		}
		return info, err
	}
	if err := sw.Flush(); err != nil {
		return info, fmt.Errorf("restore into %s: %w", s.dir, err)
	}
	s.versions.reset()
	s.emptinessChecked = false
	return info, nil
}

// snapshotReader reads a snapshot, keeping the digest of what it consumed.
type snapshotReader struct {
	r *bufio.Reader
	h hash.Hash
}

func (sr *snapshotReader) ReadByte() (byte, error) {
	b, err := sr.r.ReadByte()
	if err == nil {
		sr.h.Write([]byte{b})
	}
	return b, err
}

func (sr *snapshotReader) full(p []byte) error {
	if _, err := io.ReadFull(sr.r, p); err != nil {
		return asCorrupt(err)
	}
	sr.h.Write(p)
	return nil
}

func (sr *snapshotReader) uvarint() (uint64, error) {
	n, err := binary.ReadUvarint(sr)
	if err != nil {
		return 0, asCorrupt(err)
	}
	return n, nil
}

// bytes reads a length-prefixed byte string of at most limit bytes.
func (sr *snapshotReader) bytes(p []byte, limit uint64) ([]byte, error) {
	n, err := sr.uvarint()
	if err != nil {
		return nil, err
	}
	if n > limit {
		return nil, fmt.Errorf("%w: a field of %d bytes", ErrSnapshotCorrupt, n)
	}
	if uint64(cap(p)) < n {
		p = make([]byte, n)
	}
	p = p[:n]
	return p, sr.full(p)
}

// header reads and checks the magic, formats and header fields.
func (sr *snapshotReader) header() (SnapshotInfo, error) {
	var info SnapshotInfo
	magic := make([]byte, len(snapshotMagic)+1)
	if err := sr.full(magic); err != nil {
		return info, err
	}
	if string(magic[:len(snapshotMagic)]) != snapshotMagic {
		return info, fmt.Errorf("%w: not a lookupd snapshot", ErrSnapshotCorrupt)
	}
	if magic[len(snapshotMagic)] != snapshotContainer {
		return info, fmt.Errorf("%w: container version %d, this build reads %d", ErrSnapshotFormat, magic[len(snapshotMagic)], snapshotContainer)
	}
	format, err := sr.uvarint()
	if err != nil {
		return info, err
	}
	if format != formatV1 {
		return info, fmt.Errorf("%w: model format %d, this build reads %d", ErrSnapshotFormat, format, formatV1)
	}
	info.ModelFormat = formatV1
	if info.Position, err = sr.uvarint(); err != nil {
		return info, err
	}
	var t [8]byte
	if err := sr.full(t[:]); err != nil {
		return info, err
	}
	if n := binary.BigEndian.Uint64(t[:]); n != 0 && n <= math.MaxInt64 {
		info.PositionTime = time.Unix(0, int64(n)).UTC()
	}
	ident, err := sr.bytes(nil, 1<<10)
	if err != nil {
		return info, err
	}
	id, err := decodeIdentity(ident)
	if err != nil {
		return info, fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
	}
	info.Stream, info.StreamCreated = id.name, id.created
	return info, nil
}

// records reads the records and the trailer into sw, checking order,
// count, the checkpoint inside and the digest.
func (sr *snapshotReader) records(sw *badger.StreamWriter, info *SnapshotInfo) error {
	buf := z.NewBuffer(restoreBatch+(1<<20), "lookupd.restore")
	defer func() { _ = buf.Release() }()
	var (
		key, prev, val, checkpoint []byte
		n                          uint64
		err                        error
	)
	for {
		if key, err = sr.bytes(key, 1<<10); err != nil {
			return err
		}
		if len(key) == 0 {
			break
		}
		if val, err = sr.bytes(val, 64<<20); err != nil {
			return err
		}
		if n > 0 && bytes.Compare(key, prev) <= 0 {
			return fmt.Errorf("%w: keys out of order", ErrSnapshotCorrupt)
		}
		prev = append(prev[:0], key...)
		if bytes.Equal(key, keyCheckpoint) {
			checkpoint = append(checkpoint[:0], val...)
		}
		badger.KVToBuffer(&pb.KV{Key: key, Value: val, Version: 1, StreamId: 1}, buf)
		n++
		if buf.LenNoPadding() >= restoreBatch {
			if err := sw.Write(buf); err != nil {
				return err
			}
			buf.Reset()
		}
	}
	count, err := sr.uvarint()
	if err != nil {
		return err
	}
	want := sr.h.Sum(nil)
	got := make([]byte, len(want))
	if _, err := io.ReadFull(sr.r, got); err != nil || !bytes.Equal(got, want) {
		return fmt.Errorf("%w: digest mismatch", ErrSnapshotCorrupt)
	}
	if _, err := sr.r.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: data after the digest", ErrSnapshotCorrupt)
	}
	if count != n {
		return fmt.Errorf("%w: %d records, the trailer says %d", ErrSnapshotCorrupt, n, count)
	}
	if seq, _, err := decodeCheckpoint(checkpoint); err != nil || seq != info.Position {
		return fmt.Errorf("%w: the checkpoint inside does not match the position %d of the header", ErrSnapshotCorrupt, info.Position)
	}
	if err := sw.Write(buf); err != nil {
		return err
	}
	info.Keys = int(n) //nolint:gosec // G115: a count of records read
	return nil
}

// asCorrupt returns err as a snapshot error: itself when it already is one
// (a wrong key found by the decryption under the reader), else wrapping
// ErrSnapshotCorrupt (a truncated or altered stream).
func asCorrupt(err error) error {
	for _, known := range []error{ErrSnapshotCorrupt, ErrSnapshotFormat, ErrSnapshotKey, ErrSnapshotStream} {
		if errors.Is(err, known) {
			return err
		}
	}
	return fmt.Errorf("%w: %w", ErrSnapshotCorrupt, err)
}

// Empty reports whether the store holds no key at all (a fresh store).
func (s *Store) Empty() (bool, error) {
	empty := true
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		it.Rewind()
		empty = !it.Valid()
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("look into %s: %w", s.dir, err)
	}
	return empty, nil
}
