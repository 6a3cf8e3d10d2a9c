package ledger

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
		Description:       "Accounting of disclosures: one record per answer, listing the persons whose SSN or date of birth lookupd disclosed (no personal data), in a chain of messages per replica",
		Subjects:          []string{ReplicaSubjectPrefix + "*", LegacySubjectPrefix + "*"},
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
		// A Ledger sends its messages as fast batches: pipelined, stored in
		// order, and every message after one lost or refused refused too.
		AllowBatchPublish: true,
	}
}

// EnsureStream creates the audit stream name (StreamConfig) unless it
// exists. An audit stream of format 1 (subjects audit.persons.* only)
// gets the subjects of format 2 added; any other existing stream is kept
// as it is.
func EnsureStream(ctx context.Context, js jetstream.JetStream, name string) error {
	s, err := js.Stream(ctx, name)
	if err == nil {
		return migrate(ctx, js, s.CachedInfo().Config)
	}
	if !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("look up audit stream %q: %w", name, err)
	}
	if _, err := js.CreateStream(ctx, StreamConfig(name)); err != nil && !errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
		return fmt.Errorf("create audit stream %q: %w", name, err)
	}
	return nil
}

// migrate adds the subjects of format 2 to an audit stream of format 1.
func migrate(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if !slices.Contains(cfg.Subjects, LegacySubjectPrefix+"*") || slices.Contains(cfg.Subjects, ReplicaSubjectPrefix+"*") {
		return nil
	}
	cfg.Subjects = append(cfg.Subjects, ReplicaSubjectPrefix+"*")
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("add %s* to audit stream %q: %w", ReplicaSubjectPrefix, cfg.Name, err)
	}
	return nil
}

// ensure creates the audit stream if it is missing, and notes whether it
// allows fast batch publishing; once it has, it does nothing.
func (l *Ledger) ensure() error {
	l.ensureMu.Lock()
	defer l.ensureMu.Unlock()
	if l.ensured.Load() { // by the other caller meanwhile
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.cfg.AckTimeout)
	defer cancel()
	if err := EnsureStream(ctx, l.js, l.cfg.Stream); err != nil {
		return err
	}
	s, err := l.js.Stream(ctx, l.cfg.Stream)
	if err != nil {
		return fmt.Errorf("audit stream %q: %w", l.cfg.Stream, err)
	}
	l.batched.Store(s.CachedInfo().Config.AllowBatchPublish)
	l.ensured.Store(true)
	return nil
}
