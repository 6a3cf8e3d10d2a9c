package loadtest

import (
	"bufio"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// The files of a body store, in its directory: the sealed records one
// after the other, their offsets, and the key that seals them.
const (
	bodyData  = "bodies.dat"
	bodyIndex = "bodies.idx"
	bodyKey   = "bodies.key"
)

// BodyWriter writes a body store: answers of lookupd captured once, as
// records numbered from 0 in the order appended. Each record is sealed
// with AES-256-GCM under a key made for the store (a GET signers answer
// with expand holds SSNs and dates of birth, never a file's plaintext),
// its nonce the record's number. The index is written by Close: a store
// whose Close did not succeed has no index and does not open.
type BodyWriter struct {
	dir  string
	f    *os.File
	w    *bufio.Writer
	aead cipher.AEAD
	offs []uint64 // offset of each record appended, then of the end
	buf  []byte
}

// NewBodyWriter creates an empty body store in dir (an existing one is
// replaced), with a fresh key.
func NewBodyWriter(dir string) (*BodyWriter, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	_ = os.Remove(filepath.Join(dir, bodyIndex))
	if err := os.WriteFile(filepath.Join(dir, bodyKey), key, 0o600); err != nil {
		return nil, err
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, bodyData), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // G304: the model directory
	if err != nil {
		return nil, err
	}
	return &BodyWriter{dir: dir, f: f, w: bufio.NewWriterSize(f, 1<<20), aead: aead, offs: []uint64{0}}, nil
}

// Append seals body as the next record.
func (b *BodyWriter) Append(body []byte) error {
	n := len(b.offs) - 1
	b.buf = b.aead.Seal(b.buf[:0], nonce(n), body, nil)
	if _, err := b.w.Write(b.buf); err != nil {
		return err
	}
	b.offs = append(b.offs, b.offs[n]+uint64(len(b.buf)))
	return nil
}

// Len returns how many records have been appended.
func (b *BodyWriter) Len() int { return len(b.offs) - 1 }

// Close flushes the records, syncs them and writes the index.
func (b *BodyWriter) Close() error {
	err := b.w.Flush()
	if err == nil {
		err = b.f.Sync()
	}
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	idx := make([]byte, 8*len(b.offs))
	for i, o := range b.offs {
		binary.LittleEndian.PutUint64(idx[8*i:], o)
	}
	return WriteFileSync(filepath.Join(b.dir, bodyIndex), idx)
}

// Bodies is a body store read into memory, opened (unsealed) once: the
// bare server answers from it without any work a request but the copy.
type Bodies struct {
	data []byte
	offs []uint64 // offs[i], offs[i+1]: record i in data
}

// ReadBodies reads and unseals the body store in dir.
func ReadBodies(dir string) (*Bodies, error) {
	key, err := os.ReadFile(filepath.Join(dir, bodyKey)) //nolint:gosec // G304: the model directory
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	idx, err := os.ReadFile(filepath.Join(dir, bodyIndex)) //nolint:gosec // G304: the model directory
	if err != nil {
		return nil, err
	}
	if len(idx) < 8 || len(idx)%8 != 0 {
		return nil, fmt.Errorf("body index: %d bytes, not a list of offsets", len(idx))
	}
	sealed, err := os.ReadFile(filepath.Join(dir, bodyData)) //nolint:gosec // G304: the model directory
	if err != nil {
		return nil, err
	}
	n := len(idx)/8 - 1
	b := &Bodies{data: make([]byte, 0, len(sealed)-n*aead.Overhead()), offs: make([]uint64, 0, n+1)}
	b.offs = append(b.offs, 0)
	for i := range n {
		from, to := binary.LittleEndian.Uint64(idx[8*i:]), binary.LittleEndian.Uint64(idx[8*i+8:])
		if from > to || to > uint64(len(sealed)) {
			return nil, fmt.Errorf("body index: record %d at %d..%d of %d bytes", i, from, to, len(sealed))
		}
		if b.data, err = aead.Open(b.data, nonce(i), sealed[from:to], nil); err != nil {
			return nil, fmt.Errorf("body record %d: %w", i, err)
		}
		b.offs = append(b.offs, uint64(len(b.data)))
	}
	return b, nil
}

// Len returns the number of records.
func (b *Bodies) Len() int { return len(b.offs) - 1 }

// Body returns record i; it must not be modified.
func (b *Bodies) Body(i int) []byte { return b.data[b.offs[i]:b.offs[i+1]:b.offs[i+1]] }

// Size returns the bytes of all the records.
func (b *Bodies) Size() int { return len(b.data) }

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, errors.New("body store key: want 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// nonce is the GCM nonce of record i: its number, unique under the key of
// one store.
func nonce(i int) []byte {
	n := make([]byte, 12)
	binary.BigEndian.PutUint64(n[4:], uint64(i)) //nolint:gosec // G115: a record number, not negative
	return n
}

// WriteFileSync writes data to path through a temporary file, synced and
// renamed over path: a reader sees the whole file or none.
func WriteFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600) //nolint:gosec // G304: the model directory
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	return nil
}
