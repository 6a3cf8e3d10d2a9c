package ledger

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// errScanned stops readAll once Scan has read up to its bound.
var errScanned = errors.New("audit: scanned up to the bound")

// Scan calls fn with the records of each message of the audit stream, in
// stream order, up to and including stream sequence upTo (0: as the
// stream holds them when the call starts), with the message's stream
// sequence; a message that holds no readable record is skipped (Verify
// reports it). It returns fn's first error. What a projection of the
// stream is checked against (internal/accounting compares its index with
// it).
func Scan(ctx context.Context, js jetstream.JetStream, stream string, upTo uint64, fn func(streamSeq uint64, recs []Record) error) error {
	err := readAll(ctx, js, stream, func(m stored) error {
		if upTo != 0 && m.streamSeq > upTo {
			return errScanned
		}
		recs, err := m.records()
		if err != nil {
			return nil //nolint:nilerr // Verify reports a message that cannot be read; the others still count
		}
		if err := fn(m.streamSeq, recs); err != nil {
			return err
		}
		if m.streamSeq == upTo {
			return errScanned
		}
		return nil
	})
	if errors.Is(err, errScanned) {
		return nil
	}
	return err
}

// ScanPerson returns the records of the disclosures of person personID
// whose time is within [since, until] (a zero time bounds nothing),
// newest first. Records are not on a subject per person (formats 2, 3), so it
// reads the whole stream and keeps the person's: fine for a small
// deployment's ledger, slow for years of a large one's (the accounting
// service's index, internal/accounting, is the fast way). A message that
// cannot be read is skipped (Verify reports it).
func ScanPerson(ctx context.Context, js jetstream.JetStream, stream, personID string, since, until time.Time) ([]Record, error) {
	var out []Record
	err := readAll(ctx, js, stream, func(m stored) error {
		recs, err := m.records()
		if err != nil {
			return nil //nolint:nilerr // Verify reports a message that cannot be read; the others still count
		}
		for _, r := range recs {
			if r.PersonID == personID && (since.IsZero() || !r.Time.Before(since)) && (until.IsZero() || !r.Time.After(until)) {
				out = append(out, r)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}
