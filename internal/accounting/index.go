// Package accounting is the accounting of disclosures as a read model of
// the audit ledger: a projection of the audit stream into a Badger store of
// its own, indexed by person and time, so that one person's disclosures are
// a range read rather than a scan of the whole stream. Like the read model
// of persons, it keeps the stream position it has applied in the same
// transaction as the records (a crash loses nothing and applies nothing
// twice), and it can always be rebuilt by deleting it: the stream is the
// source.
package accounting

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/internal/audit"
)

// Index is the accounting read model. Apply is for one goroutine (the
// follower); Search and Position for any number.
type Index struct {
	db *badger.DB
}

// Keys: positionKey holds the last stream sequence applied (8 bytes, big
// endian); a record is under recordPrefix + person id + 0 + time (Unix
// nanoseconds) + stream sequence + index in the message (8, 8 and 4
// bytes, big endian), so that a person's records are one range in time
// order.
var (
	positionKey  = []byte("pos")
	recordPrefix = []byte("r/")
)

// Open opens (creating if needed) the index in dir.
func Open(dir string) (*Index, error) {
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithDetectConflicts(false). // a single writer: the follower
		WithNumVersionsToKeep(1).
		WithMetricsEnabled(false)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("open accounting index %s: %w", dir, err)
	}
	return &Index{db: db}, nil
}

// Close closes the index.
func (x *Index) Close() error { return x.db.Close() }

// Position returns the last stream sequence applied (0: none).
func (x *Index) Position() (uint64, error) {
	var pos uint64
	err := x.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(positionKey)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return item.Value(func(v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("accounting index: position of %d bytes", len(v))
			}
			pos = binary.BigEndian.Uint64(v)
			return nil
		})
	})
	return pos, err
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
		recs, err := audit.RecordsOf(m.Subject, m.Data)
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
	if err := setRetry(&x.db, &txn, positionKey, v[:]); err != nil {
		return err
	}
	return txn.Commit()
}

// put writes r, the i-th record of the message at stream sequence seq.
func (x *Index) put(txn **badger.Txn, seq uint64, i int, r *audit.Record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return setRetry(&x.db, txn, recordKey(r.PersonID, r.Time, seq, i), v)
}

// setRetry sets k to v in *txn; when the transaction is full it commits
// it and goes on in a new one. (The position is set last, so a crash
// between the two leaves records indexed but the position before them:
// applying them again writes the same keys.)
func setRetry(db **badger.DB, txn **badger.Txn, k, v []byte) error {
	err := (*txn).Set(k, v)
	if !errors.Is(err, badger.ErrTxnTooBig) {
		return err
	}
	if err := (*txn).Commit(); err != nil {
		return err
	}
	*txn = (*db).NewTransaction(true)
	return (*txn).Set(k, v)
}

// recordKey returns the key of a record of person at t, stored as the
// i-th record of the message at stream sequence seq.
func recordKey(person string, t time.Time, seq uint64, i int) []byte {
	k := make([]byte, 0, len(recordPrefix)+len(person)+1+20)
	k = append(append(append(k, recordPrefix...), person...), 0)
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
