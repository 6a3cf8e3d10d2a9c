package ledger

import (
	"context"
	"errors"

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
