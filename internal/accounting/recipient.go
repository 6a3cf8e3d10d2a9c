package accounting

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/lookup/persons/internal/ledger"
)

// RecipientQuery is a search of what a recipient was disclosed: a client
// (a token's azp or client_id), a subject (a token's sub), or a client's
// disclosures to one of its subjects.
type RecipientQuery struct {
	Client, Subject string    // at least one
	Since, Until    time.Time // a zero time bounds nothing
	// After is the cursor of the previous page ("" for the first).
	After string
	Limit int // records a page; 0 = 100
}

// ErrNoRecipient is returned by SearchRecipient for a query of neither a
// client nor a subject, or of one the index does not key (holding a 0
// byte).
var ErrNoRecipient = errors.New("accounting: a search by recipient needs a client or a subject (without a 0 byte)")

// SearchRecipient returns a page of the records disclosed to q's
// recipient within [Since, Until] that keep keeps (nil: all), newest
// first, and the cursor of the next page ("" when this is the last). With
// a subject it reads the index by subject (filtered by client when one is
// given too); with only a client, the index by client. Each record is
// read from its key by person (the keys by recipient hold no more than
// the person id).
func (x *Index) SearchRecipient(q RecipientQuery, keep func(*ledger.Record) bool) ([]ledger.Record, string, error) {
	by, s := clientPrefix, q.Client
	switch {
	case q.Client == "" && q.Subject == "", q.Client != "" && !indexable(q.Client), q.Subject != "" && !indexable(q.Subject):
		return nil, "", ErrNoRecipient
	case q.Client == "":
		by, s = subjectPrefix, q.Subject
	case q.Subject != "":
		// The subject's keys, filtered by client: a subject (a user or a
		// service) is mostly one client's, so its range is the narrower.
		// (At 10M records the client's range filtered by subject read
		// 50 times the records it showed: p99 987 ms, against 538 ms for
		// the subject's alone.)
		by, s = subjectPrefix, q.Subject
		inner := keep
		keep = func(r *ledger.Record) bool { return r.Client == q.Client && (inner == nil || inner(r)) }
	}
	prefix := append(append(append([]byte{}, by...), s...), 0)
	var person, key []byte // reused from one record to the next
	read := func(txn *badger.Txn, item *badger.Item) (ledger.Record, error) {
		k := item.Key()
		if len(k) != len(prefix)+20 {
			return ledger.Record{}, fmt.Errorf("accounting index: key %x is not a recipient's", k)
		}
		var err error
		if person, err = item.ValueCopy(person[:0]); err != nil {
			return ledger.Record{}, err
		}
		key = append(append(append(append(key[:0], recordPrefix...), person...), 0), k[len(prefix):]...)
		rec, err := txn.Get(key)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return ledger.Record{}, fmt.Errorf("accounting index: key %x names a record the index lacks", k)
		}
		if err != nil {
			return ledger.Record{}, err
		}
		return x.record(rec)
	}
	return x.page(keyRange{prefix: prefix, since: q.Since, until: q.Until, after: q.After, limit: q.Limit}, read, keep)
}

// recipientKeys returns the number of keys by recipient r calls for: one
// by its client and one by its subject, when indexable.
func recipientKeys(r *ledger.Record) int {
	n := 0
	for _, s := range [...]string{r.Client, r.Subject} {
		if indexable(s) {
			n++
		}
	}
	return n
}

// countByRecipient returns the number of keys by client and by subject
// of the messages up to stream sequence upTo (0: all), their keys alone
// read.
func countByRecipient(txn *badger.Txn, upTo uint64) (int, error) {
	n := 0
	for _, prefix := range [][]byte{clientPrefix, subjectPrefix} {
		opts := badger.DefaultIteratorOptions
		opts.Prefix, opts.PrefetchValues = prefix, false
		it := txn.NewIterator(opts)
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			if len(k) < len(prefix)+21 {
				it.Close()
				return n, fmt.Errorf("accounting index: key %x is not a recipient's", k)
			}
			if upTo == 0 || binary.BigEndian.Uint64(k[len(k)-12:]) <= upTo {
				n++
			}
		}
		it.Close()
	}
	return n, nil
}
