package ledger

import (
	"context"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Accounting returns the records of the disclosures of person personID
// whose time is within [since, until] (a zero time bounds nothing),
// newest first. Records are not on a subject per person (format 2), so it
// reads the whole stream and keeps the person's: fine for a small
// deployment's ledger, slow for years of a large one's. A message that
// cannot be read is skipped (Verify reports it).
func Accounting(ctx context.Context, js jetstream.JetStream, stream, personID string, since, until time.Time) ([]Record, error) {
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
