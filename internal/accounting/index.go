package accounting

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/internal/ledger"
)

// Index is the accounting read model. Apply is for one goroutine (the
// follower); Search and Position for any number.
type Index struct {
	db  *badger.DB
	log *slog.Logger
	buf []byte // the value being written (Apply)
}

// Keys: positionKey holds the last stream sequence applied (8 bytes, big
// endian); formatKey the format of the index (1 byte: indexFormat); a
// record is under recordPrefix + person id + 0 + time (Unix nanoseconds)
// + stream sequence + index in the message (8, 8 and 4 bytes, big
// endian), so that a person's records are one range in time order, and
// its value is what the key does not hold (value.go). A record with a
// client is also under clientPrefix + client id + 0 + the same 20 bytes,
// and one with a subject (the token's sub) under subjectPrefix + subject
// + 0 + the same: their value is the person id, which with the 20 bytes
// gives the record's key (the search by recipient, recipient.go). A
// client or subject holding a 0 byte is not indexed so.
var (
	positionKey   = []byte("pos")
	formatKey     = []byte("format")
	recordPrefix  = []byte("r/")
	clientPrefix  = []byte("c/")
	subjectPrefix = []byte("s/")
)

// indexFormat is the format of the index's keys and values. An index
// without it (its records' values were their JSON), or of another format
// (2: no keys by client and subject), is emptied when opened, and
// rebuilt from the stream.
const indexFormat = 3

// Options configure Open.
type Options struct {
	// MemoryBudget, when non-zero, is the memory in bytes the process
	// aims to stay within, at least MinMemoryBudget: Badger's memtables,
	// value log and compactors are sized to a share of it (memory.go).
	// 0: Badger's defaults, which grow to gigabytes while the index is
	// built from a large ledger.
	MemoryBudget int64
	// Logger is told when an index of an older format, or of another
	// stream (identity.go), is emptied to be rebuilt (nil: discard).
	Logger *slog.Logger
}

// Open opens (creating if needed) the index in dir.
func Open(dir string, opts Options) (*Index, error) {
	bopts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithDetectConflicts(false). // a single writer: the follower
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false)
	if opts.MemoryBudget != 0 {
		var err error
		if bopts, err = withMemoryBudget(bopts, opts.MemoryBudget); err != nil {
			return nil, fmt.Errorf("open accounting index %s: %w", dir, err)
		}
	}
	db, err := badger.Open(bopts)
	if err != nil {
		return nil, fmt.Errorf("open accounting index %s: %w", dir, err)
	}
	x := &Index{db: db, log: opts.Logger}
	if x.log == nil {
		x.log = slog.New(slog.DiscardHandler)
	}
	if err := x.checkFormat(dir, x.log); err != nil {
		_ = db.Close()
		return nil, err
	}
	return x, nil
}

// checkFormat marks a new index with indexFormat, and empties one of
// another format (to be rebuilt from the stream by its follower).
func (x *Index) checkFormat(dir string, logger *slog.Logger) error {
	format, err := x.get(formatKey)
	if err != nil {
		return fmt.Errorf("accounting index %s: %w", dir, err)
	}
	if len(format) == 1 && format[0] == indexFormat {
		return nil
	}
	pos, err := x.get(positionKey)
	if err != nil {
		return fmt.Errorf("accounting index %s: %w", dir, err)
	}
	if pos != nil || format != nil {
		logger.Warn("accounting index of an older format: emptied, to be rebuilt from the audit stream",
			"dir", dir, "format", fmt.Sprintf("%x", format), "want_format", indexFormat)
		if err := x.db.DropAll(); err != nil {
			return fmt.Errorf("empty accounting index %s: %w", dir, err)
		}
	}
	return x.db.Update(func(txn *badger.Txn) error { return txn.Set(formatKey, []byte{indexFormat}) })
}

// get returns the value of k (nil when there is none).
func (x *Index) get(k []byte) ([]byte, error) {
	var v []byte
	err := x.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	return v, err
}

// Close closes the index.
func (x *Index) Close() error { return x.db.Close() }

// Position returns the last stream sequence applied (0: none).
func (x *Index) Position() (uint64, error) {
	v, err := x.get(positionKey)
	switch {
	case err != nil:
		return 0, err
	case v == nil:
		return 0, nil
	case len(v) != 8:
		return 0, fmt.Errorf("accounting index: position of %d bytes", len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Message is a message of the audit stream to apply.
type Message struct {
	StreamSeq uint64
	Subject   string
	Data      []byte
}

// Apply indexes the records of msgs (in stream order, after the
// position) and moves the position to the last one, in one transaction.
// A message already applied (at or before the position) is skipped; one
// that is not an audit message is skipped too (audit verify reports it).
func (x *Index) Apply(msgs []Message) error {
	if len(msgs) == 0 {
		return nil
	}
	pos, err := x.Position()
	if err != nil {
		return err
	}
	txn := x.db.NewTransaction(true)
	defer txn.Discard()
	last := pos
	for _, m := range msgs {
		if m.StreamSeq <= last {
			continue
		}
		last = m.StreamSeq
		recs, err := ledger.RecordsOf(m.Subject, m.Data)
		if err != nil {
			continue
		}
		for i := range recs {
			if err := x.put(&txn, m.StreamSeq, i, &recs[i]); err != nil {
				return err
			}
		}
	}
	if last == pos {
		return nil
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], last)
	if err := setRetry(x.db, &txn, kv{positionKey, v[:]}); err != nil {
		return err
	}
	return txn.Commit()
}

// put writes r, the i-th record of the message at stream sequence seq:
// its key and value, and its keys by client and by subject, all in one
// transaction. (Badger keeps the keys' and values' bytes until the
// transaction is committed: they are slices of x.buf, which a record that
// outgrows it replaces; a key by client or subject shares its value, the
// person id, with the record's key.)
func (x *Index) put(txn **badger.Txn, seq uint64, i int, r *ledger.Record) error {
	if cap(x.buf)-len(x.buf) < 1024 {
		x.buf = make([]byte, 0, 256<<10)
	}
	start := len(x.buf)
	x.buf = appendKey(x.buf, recordPrefix, r.PersonID, r.Time, seq, i)
	k := x.cut(start)
	start = len(x.buf)
	x.buf = appendValue(x.buf, r)
	kvs := [3]kv{{k, x.cut(start)}}
	n := 1
	person := k[len(recordPrefix) : len(recordPrefix)+len(r.PersonID)]
	for _, by := range [...]struct {
		prefix []byte
		s      string
	}{{clientPrefix, r.Client}, {subjectPrefix, r.Subject}} {
		if !indexable(by.s) {
			continue
		}
		start = len(x.buf)
		x.buf = appendKey(x.buf, by.prefix, by.s, r.Time, seq, i)
		kvs[n] = kv{x.cut(start), person}
		n++
	}
	return setRetry(x.db, txn, kvs[:n]...)
}

// cut returns x.buf from start, capped so that nothing appends to it.
func (x *Index) cut(start int) []byte { return x.buf[start:len(x.buf):len(x.buf)] }

// indexable reports whether a client or subject s is indexed: one that
// is given and holds no 0 byte (which ends it in a key).
func indexable(s string) bool { return s != "" && strings.IndexByte(s, 0) < 0 }

// kv is a key and its value.
type kv struct{ k, v []byte }

// setRetry sets each of kvs in *txn; when the transaction is full it
// commits it and sets them all again in a new one, so that kvs (a record
// and its keys by recipient) are in one transaction: a reader sees all
// of them or none. (The position is set last, so a crash between two
// commits leaves records indexed but the position before them: applying
// them again writes the same keys.)
func setRetry(db *badger.DB, txn **badger.Txn, kvs ...kv) error {
	for _, e := range kvs {
		err := (*txn).Set(e.k, e.v)
		if err == nil {
			continue
		}
		if !errors.Is(err, badger.ErrTxnTooBig) {
			return err
		}
		if err := (*txn).Commit(); err != nil {
			return err
		}
		*txn = db.NewTransaction(true)
		for _, e := range kvs {
			if err := (*txn).Set(e.k, e.v); err != nil {
				return err
			}
		}
		return nil
	}
	return nil
}

// recordKey returns the key of a record of person at t, stored as the
// i-th record of the message at stream sequence seq.
func recordKey(person string, t time.Time, seq uint64, i int) []byte {
	return appendKey(make([]byte, 0, len(recordPrefix)+len(person)+1+20), recordPrefix, person, t, seq, i)
}

// appendKey appends the key prefix + s + 0 + the time t, the stream
// sequence seq and the index i in the message.
func appendKey(k, prefix []byte, s string, t time.Time, seq uint64, i int) []byte {
	k = append(append(append(k, prefix...), s...), 0)
	k = binaryAppendTime(k, t)
	k = binary.BigEndian.AppendUint64(k, seq)
	return binary.BigEndian.AppendUint32(k, uint32(i)) //nolint:gosec // G115: an index in a message is under 2^32
}

// nanos returns t as the Unix nanoseconds of a key (a time before 1970,
// which no record has, as 0).
func nanos(t time.Time) uint64 {
	n := t.UnixNano()
	if n < 0 {
		return 0
	}
	return uint64(n)
}

// binaryAppendTime appends the key bytes of t.
func binaryAppendTime(k []byte, t time.Time) []byte {
	return binary.BigEndian.AppendUint64(k, nanos(t))
}
