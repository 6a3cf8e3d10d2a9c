package audit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// DefaultStream is the name of the audit stream.
const DefaultStream = "PERSONS_AUDIT"

// StreamConfig returns the configuration with which a Ledger creates the
// audit stream name when it is missing: file storage, kept six years
// (HIPAA 164.316(b)(2)), no size limit, and no message may be deleted by
// the limits (Discard new: a full stream refuses records rather than lose
// old ones). deploy/streams holds the same definition, and an R3 one.
func StreamConfig(name string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              name,
		Description:       "Accounting of disclosures: one record per person whose SSN or date of birth lookupd disclosed (no personal data)",
		Subjects:          []string{SubjectPrefix + "*"},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      -1,
		MaxMsgs:           -1,
		MaxBytes:          -1,
		MaxAge:            6 * 366 * 24 * time.Hour,
		MaxMsgsPerSubject: -1,
		MaxMsgSize:        64 << 10,
		Discard:           jetstream.DiscardNew,
		Storage:           jetstream.FileStorage,
		Replicas:          1,
		Duplicates:        2 * time.Minute,
		AllowDirect:       true,
		Compression:       jetstream.S2Compression,
		// A Ledger stores the records of concurrent requests as one fast
		// batch, with one acknowledgement.
		AllowBatchPublish: true,
	}
}

// EnsureStream creates the audit stream name (StreamConfig) unless it
// exists.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string) error {
	_, err := js.Stream(ctx, name)
	if err == nil {
		return nil
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("look up audit stream %q: %w", name, err)
	}
	if _, err := js.CreateStream(ctx, StreamConfig(name)); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create audit stream %q: %w", name, err)
	}
	return nil
}
