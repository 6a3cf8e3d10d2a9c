package projector

import (
	"bufio"
	"bytes"
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
)

// The reading side of the snapshot format (see snapshot.go): a
// snapshot loaded into an empty store, every part checked before it
// becomes visible.

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
	// A snapshot of an older build holds no signer sets.
	if err := s.ensureSignerSets(); err != nil {
		return info, err
	}
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
