package accounting

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sort"

	"github.com/dgraph-io/badger/v4"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/ledger"
)

// Digest is what a set of records comes to, person by person: how many
// records each person has and the sum of their hashes (each record's
// hash is that of its JSON, where it is stored included). Two sets with
// the same digest hold the same records, but for a hash collision: an
// index is compared with a full scan of the stream (CompareWithStream)
// without holding either in memory. Records under a person, for an index,
// are those filed under the person's key; an index's digest also counts
// its keys by client and subject against those its records call for.
type Digest struct {
	Records int
	persons map[string]tally
	// chains holds the last message seq read of each chain (formats 2, 3).
	chains map[string]uint64
	// misfiled counts records of the index whose key does not say their
	// person, time or place (stream sequence and index in the message).
	misfiled int
	// byRecipient counts an index's keys by client and by subject, and
	// wantByRecipient those its records call for (recipient.go).
	byRecipient, wantByRecipient int
}

// tally is one person's records in a Digest.
type tally struct {
	n   int
	sum uint64
}

// digestSeed seeds the records' hashes: digests compared must be made in
// the same process.
var digestSeed = maphash.MakeSeed()

// NewDigest returns an empty digest, for records read elsewhere (Add).
func NewDigest() *Digest { return &Digest{persons: map[string]tally{}, chains: map[string]uint64{}} }

// Add counts r, filed under person.
func (d *Digest) Add(person string, r *ledger.Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	t := d.persons[person]
	t.n++
	t.sum += maphash.Bytes(digestSeed, b)
	d.persons[person] = t
	d.Records++
	if r.Index > 0 {
		d.chains[r.Chain] = max(d.chains[r.Chain], r.Seq)
	}
	return nil
}

// ChainLast returns the last message of chain (formats 2, 3) whose records d
// counts (0: none): a record read later with a higher Seq on the chain
// was stored after them.
func (d *Digest) ChainLast(chain string) uint64 { return d.chains[chain] }

// PersonRecords returns how many records each person has, in no order.
func (d *Digest) PersonRecords() []int {
	out := make([]int, 0, len(d.persons))
	for _, t := range d.persons {
		out = append(out, t.n)
	}
	return out
}

// Persons returns the number of persons with records.
func (d *Digest) Persons() int { return len(d.persons) }

// ScanDigest reads the audit stream stream up to stream sequence upTo (0:
// as it stands) and returns the digest of its records, each under its
// person: what the index should hold once it has applied upTo.
func ScanDigest(ctx context.Context, js jetstream.JetStream, stream string, upTo uint64) (*Digest, error) {
	d := NewDigest()
	err := ledger.Scan(ctx, js, stream, upTo, func(_ uint64, recs []ledger.Record) error {
		for i := range recs {
			if err := d.Add(recs[i].PersonID, &recs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return d, err
}

// Digest returns the digest of the records x holds from the messages up
// to stream sequence upTo (0: all), each under the person of its key.
func (x *Index) Digest(upTo uint64) (*Digest, error) {
	d := NewDigest()
	err := x.db.View(func(txn *badger.Txn) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = recordPrefix
		it := txn.NewIterator(opts)
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().Key()
			person, _, seq, i, ok := parseRecordKey(k)
			if !ok {
				d.misfiled++
				continue
			}
			if upTo != 0 && seq > upTo {
				continue
			}
			r, err := x.record(it.Item())
			if err != nil {
				return err
			}
			if !bytes.Equal(recordKey(r.PersonID, r.Time, seq, i), k) || (r.Index != 0 && r.Index != i+1) {
				d.misfiled++
			}
			if err := d.Add(person, &r); err != nil {
				return err
			}
			d.wantByRecipient += recipientKeys(&r)
		}
		var err error
		d.byRecipient, err = countByRecipient(txn, upTo)
		return err
	})
	return d, err
}

// parseRecordKey splits a record's key (recordKey).
func parseRecordKey(k []byte) (person string, at, seq uint64, i int, ok bool) {
	rest := k[len(recordPrefix):]
	n := bytes.IndexByte(rest, 0)
	if n < 0 || len(rest) != n+1+20 {
		return "", 0, 0, 0, false
	}
	tail := rest[n+1:]
	return string(rest[:n]), binary.BigEndian.Uint64(tail), binary.BigEndian.Uint64(tail[8:]), int(binary.BigEndian.Uint32(tail[16:])), true
}

// maxDiffs bounds the differences Diff lists.
const maxDiffs = 10

// Diff returns how d (an index's) differs from scan (the stream's): the
// persons whose records differ, at most maxDiffs of them, the persons in
// order, and a last line counting the rest; nil when the two are equal.
func (d *Digest) Diff(scan *Digest) []string {
	var persons []string
	for p, t := range d.persons {
		if scan.persons[p] != t {
			persons = append(persons, p)
		}
	}
	for p := range scan.persons {
		if _, ok := d.persons[p]; !ok {
			persons = append(persons, p)
		}
	}
	return d.diff(scan, persons)
}

// DiffPersons is Diff for persons only: how their records in d (read
// through a search) differ from scan's.
func (d *Digest) DiffPersons(scan *Digest, persons []string) []string {
	var differ []string
	seen := map[string]bool{}
	for _, p := range persons {
		if !seen[p] && d.persons[p] != scan.persons[p] {
			differ = append(differ, p)
		}
		seen[p] = true
	}
	return d.diff(scan, differ)
}

// diff describes how the records of persons differ between d and scan.
func (d *Digest) diff(scan *Digest, persons []string) []string {
	var out []string
	if d.misfiled > 0 {
		out = append(out, fmt.Sprintf("%d records of the index under a key that does not match them", d.misfiled))
	}
	if d.byRecipient != d.wantByRecipient {
		out = append(out, fmt.Sprintf("%d keys by client or subject in the index, its records call for %d", d.byRecipient, d.wantByRecipient))
	}
	sort.Strings(persons)
	for i, p := range persons {
		if i == maxDiffs {
			out = append(out, fmt.Sprintf("and %d more persons", len(persons)-maxDiffs))
			break
		}
		got, want := d.persons[p], scan.persons[p]
		what := "different records"
		if got.n != want.n {
			what = "a different number of records"
		}
		out = append(out, fmt.Sprintf("person %s: %s: the index holds %d, the stream %d", p, what, got.n, want.n))
	}
	return out
}

// CompareWithStream compares x with a full scan of the audit stream
// stream up to the position x has applied, and returns how they differ
// (nil: x holds exactly the stream's records, each under its person and
// time).
func (x *Index) CompareWithStream(ctx context.Context, js jetstream.JetStream, stream string) ([]string, error) {
	pos, err := x.Position()
	if err != nil {
		return nil, err
	}
	if pos == 0 {
		return nil, fmt.Errorf("accounting index: nothing applied to compare")
	}
	scan, err := ScanDigest(ctx, js, stream, pos)
	if err != nil {
		return nil, err
	}
	idx, err := x.Digest(pos)
	if err != nil {
		return nil, err
	}
	return idx.Diff(scan), nil
}
