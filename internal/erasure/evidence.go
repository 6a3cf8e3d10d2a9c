package erasure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/replica"
)

// The bucket's keys besides the lease.
const (
	keyCursor    = "cursor"    // the cursor of the lease holder's work
	keySnapshots = "snapshots" // Marks: snapshots older than Through deleted
	// prefixEntity + kind + "." + id (a signer: consumer id "." signer id):
	// an EntityRecord.
	prefixEntity = "entity."
	// prefixReplica + replica name: Marks of the replica's compactions.
	prefixReplica = "replica."
)

// maxMarks is how many marks a history keeps, the newest.
const maxMarks = 256

// Bucket returns the erasure bucket over js; create makes it when it is
// missing (a reader passes false and gets jetstream.ErrBucketNotFound).
func Bucket(ctx context.Context, js jetstream.JetStream, name string, create bool) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) && create {
		kv, err = js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 1,
			Description: "lookupd erasure: the lease, the cursor and the evidence (docs/operations.md)",
			Storage:     jetstream.FileStorage})
		if errors.Is(err, jetstream.ErrBucketExists) {
			kv, err = js.KeyValue(ctx, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("erasure bucket %q: %w", name, err)
	}
	return kv, nil
}

// cursor is how far the lease holder has gone.
type cursor struct {
	Seq              uint64    `json:"seq"`               // deletions up to it are erased from the stream and dead letters
	SnapshotsThrough uint64    `json:"snapshots_through"` // snapshots before it are deleted
	SnapshotsDue     time.Time `json:"snapshots_due"`     // since when Seq > SnapshotsThrough; zero if not
}

func readCursor(ctx context.Context, kv jetstream.KeyValue) (cursor, uint64, error) {
	var c cursor
	e, err := kv.Get(ctx, keyCursor)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return c, 0, nil
	}
	if err != nil {
		return c, 0, fmt.Errorf("erasure cursor: %w", err)
	}
	if err := json.Unmarshal(e.Value(), &c); err != nil {
		return c, 0, fmt.Errorf("erasure cursor: %w", err)
	}
	return c, e.Revision(), nil
}

// writeCursor writes c if the cursor is still at revision rev (0: none),
// so that a holder that lost the lease cannot move it back.
func writeCursor(ctx context.Context, kv jetstream.KeyValue, c cursor, rev uint64) (uint64, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return 0, err
	}
	if rev == 0 {
		rev, err = kv.Create(ctx, keyCursor, b)
	} else {
		rev, err = kv.Update(ctx, keyCursor, b, rev)
	}
	if err != nil {
		return 0, fmt.Errorf("erasure cursor: %w", err)
	}
	return rev, nil
}

// EntityRecord is the evidence of one deletion's erasure from the stream
// and the dead letters.
type EntityRecord struct {
	Kind        string    `json:"kind"` // consumer, business_contact or authorized_signer
	ID          string    `json:"id"`
	ConsumerID  string    `json:"consumer_id,omitempty"` // a signer's
	Seq         uint64    `json:"seq"`                   // stream sequence of the deletion
	DeletedAt   time.Time `json:"deleted_at"`            // the deletion's stream time
	ErasedAt    time.Time `json:"erased_at"`             // when the stream and the dead letters were erased
	Messages    int       `json:"messages"`              // messages erased from the stream (signers' included)
	DeadLetters int       `json:"dead_letters"`          // dead letters erased
	// ErasedWith names the consumer whose deletion erased this signer
	// ("" when its own deletion did).
	ErasedWith string `json:"erased_with,omitempty"`
	// Stream and DLQStream name the stream and the dead-letter stream
	// erased, for a reader of the evidence alone (Status without Live).
	Stream    string `json:"stream"`
	DLQStream string `json:"dlq_stream"`
}

func entityKey(kind, consumerID, id string) string {
	if kind == "authorized_signer" {
		return prefixEntity + kind + "." + consumerID + "." + id
	}
	return prefixEntity + kind + "." + id
}

// putEntity records r; a record of the same deletion already there (a
// pass redone after an interruption) keeps its time and adds its counts.
func putEntity(ctx context.Context, kv jetstream.KeyValue, r EntityRecord) error {
	key := entityKey(r.Kind, r.ConsumerID, r.ID)
	old, ok, err := getEntity(ctx, kv, key)
	if err != nil {
		return err
	}
	if ok && old.Seq == r.Seq {
		r.ErasedAt = old.ErasedAt
		r.Messages += old.Messages
		r.DeadLetters += old.DeadLetters
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, key, b); err != nil {
		return fmt.Errorf("erasure evidence: %w", err)
	}
	return nil
}

func getEntity(ctx context.Context, kv jetstream.KeyValue, key string) (EntityRecord, bool, error) {
	var r EntityRecord
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return r, false, nil
	}
	if err != nil {
		return r, false, fmt.Errorf("erasure evidence: %w", err)
	}
	return r, true, json.Unmarshal(e.Value(), &r)
}

// A Mark says that a place held nothing before stream sequence Through
// from At on: the snapshots, or a replica's files.
type Mark struct {
	Through uint64    `json:"through"`
	At      time.Time `json:"at"`
	Name    string    `json:"name,omitempty"` // the snapshot bucket's, for the snapshots
}

// appendMark adds m to the history at key (compare-and-set, retried).
func appendMark(ctx context.Context, kv jetstream.KeyValue, key string, m Mark) error {
	for range 5 {
		marks, rev, err := readMarks(ctx, kv, key)
		if err != nil {
			return err
		}
		if n := len(marks); n > 0 && marks[n-1].Through >= m.Through {
			return nil // already as far
		}
		marks = append(marks, m)
		if len(marks) > maxMarks {
			marks = marks[len(marks)-maxMarks:]
		}
		b, err := json.Marshal(marks)
		if err != nil {
			return err
		}
		if rev == 0 {
			_, err = kv.Create(ctx, key, b)
		} else {
			_, err = kv.Update(ctx, key, b, rev)
		}
		if err == nil {
			return nil
		}
		if !errors.Is(err, jetstream.ErrKeyExists) {
			return fmt.Errorf("erasure evidence %s: %w", key, err)
		}
	}
	return fmt.Errorf("erasure evidence %s: written by others meanwhile", key)
}

func readMarks(ctx context.Context, kv jetstream.KeyValue, key string) ([]Mark, uint64, error) {
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("erasure evidence %s: %w", key, err)
	}
	var marks []Mark
	if err := json.Unmarshal(e.Value(), &marks); err != nil {
		return nil, 0, fmt.Errorf("erasure evidence %s: %w", key, err)
	}
	return marks, e.Revision(), nil
}

// firstAt returns the time of the first mark through seq or beyond.
func firstAt(marks []Mark, seq uint64) (time.Time, bool) {
	for _, m := range marks {
		if m.Through >= seq {
			return m.At, true
		}
	}
	return time.Time{}, false
}

// replicaKey is the key of a replica's compactions: its name with the
// characters a key may not hold replaced.
func replicaKey(name string) string {
	return prefixReplica + strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '=':
			return r
		}
		return '_'
	}, name)
}

// register makes replica known to the evidence with no compaction yet, so
// that Status reports its files as not yet cleared until it compacts.
func register(ctx context.Context, kv jetstream.KeyValue, replica string) error {
	_, err := kv.Create(ctx, replicaKey(replica), []byte("[]"))
	if err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("erasure evidence: %w", err)
	}
	return nil
}

// CompactEvery compacts rep's files every quarter of the bound when a
// deletion was applied since the last compaction (replica.CompactEvery),
// and records each compaction in the evidence, until ctx is done.
func (e *Eraser) CompactEvery(ctx context.Context, rep *replica.Replica) {
	rep.CompactEvery(ctx, e.cfg.Delay/4, e.logger, func(info replica.CompactionInfo) {
		if err := e.RecordCompaction(ctx, info.Position, info.At); err != nil && ctx.Err() == nil {
			e.logger.Error("the compaction is not in the erasure's evidence; recorded at the next one", "err", err)
		}
	})
}

// RecordCompaction records that this replica's files hold nothing of the
// deletions up to position since at (internal/replica's compaction).
func (e *Eraser) RecordCompaction(ctx context.Context, position uint64, at time.Time) error {
	kv, err := Bucket(ctx, e.cfg.JS, e.cfg.Bucket, true)
	if err != nil {
		return err
	}
	return appendMark(ctx, kv, replicaKey(e.cfg.Replica), Mark{Through: position, At: at.UTC()})
}
