package audit

import (
	"context"
	"sort"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Accounting returns the records of the disclosures of person personID
// whose time is within [since, until] (a zero time bounds nothing),
// newest first.
func Accounting(ctx context.Context, js jetstream.JetStream, stream, personID string, since, until time.Time) ([]Record, error) {
	var out []Record
	err := readAll(ctx, js, stream, Subject(personID), func(_ uint64, data []byte) error {
		r, err := decodeRecord(data)
		if err != nil {
			return err
		}
		if (since.IsZero() || !r.Time.Before(since)) && (until.IsZero() || !r.Time.After(until)) {
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}
