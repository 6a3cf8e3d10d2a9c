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
	msgs, err := readAll(ctx, js, stream, Subject(personID))
	if err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(msgs))
	for _, m := range msgs {
		r, err := decodeRecord(m.data)
		if err != nil {
			return nil, err
		}
		if (!since.IsZero() && r.Time.Before(since)) || (!until.IsZero() && r.Time.After(until)) {
			continue
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.After(out[j].Time) })
	return out, nil
}
