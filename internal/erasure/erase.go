package erasure

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/projector"
)

// subjects returns the subjects whose messages before a deletion of ent
// are erased: the entity's own and, for a consumer, its signers'.
func subjects(ent events.Entity) []string {
	s := []string{ent.Subject()}
	if ent.Kind == events.KindConsumer {
		s = append(s, events.SubjectPrefixSigner+ent.ID+".*")
	}
	return s
}

// dlqSubject is the dead-letter subject of an original subject
// (docs/events.md).
func dlqSubject(subject string) string { return "dlq." + subject }

// erase erases what came before the deletion d from the stream and every
// dead letter of its subjects, then records it in kv: a record for the
// entity and, for a consumer, one for each signer whose messages went with
// it. Each step is idempotent.
func (e *Eraser) erase(ctx context.Context, kv jetstream.KeyValue, d projector.Deletion) error {
	stream, err := e.cfg.JS.Stream(ctx, e.cfg.Stream)
	if err != nil {
		return fmt.Errorf("erasure: stream %s: %w", e.cfg.Stream, err)
	}
	if err := e.step("stream"); err != nil {
		return err
	}
	erased := map[string]int{} // messages by subject
	for _, subj := range subjects(d.Entity) {
		err := eraseBefore(ctx, stream, subj, d.Seq, erased)
		if err != nil {
			return fmt.Errorf("erasure: stream %s, deletion at %d: %w", e.cfg.Stream, d.Seq, err)
		}
	}
	if err := e.step("dlq"); err != nil {
		return err
	}
	letters := map[string]int{}
	dlq, err := e.cfg.JS.Stream(ctx, e.cfg.DLQStream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound): // no dead letter ever
	case err != nil:
		return fmt.Errorf("erasure: dead-letter stream %s: %w", e.cfg.DLQStream, err)
	default:
		for _, subj := range subjects(d.Entity) {
			if err := eraseBefore(ctx, dlq, dlqSubject(subj), math.MaxUint64, letters); err != nil {
				return fmt.Errorf("erasure: dead-letter stream %s, deletion at %d: %w", e.cfg.DLQStream, d.Seq, err)
			}
		}
	}
	return e.record(ctx, kv, d, erased, letters)
}

// record writes the evidence of d's erasure, counts and logs it.
func (e *Eraser) record(ctx context.Context, kv jetstream.KeyValue, d projector.Deletion, erased, letters map[string]int) error {
	now := time.Now().UTC()
	recs := map[string]*EntityRecord{}
	entity := func(ent events.Entity) *EntityRecord {
		subj := ent.Subject()
		if recs[subj] == nil {
			recs[subj] = &EntityRecord{Kind: ent.Kind.String(), ID: ent.ID,
				Seq: d.Seq, DeletedAt: d.Time, ErasedAt: now, Stream: e.cfg.Stream, DLQStream: e.cfg.DLQStream}
			if ent.Kind == events.KindSigner {
				recs[subj].ConsumerID = ent.ConsumerID
			}
			if ent != d.Entity {
				recs[subj].ErasedWith = d.Entity.ID
			}
		}
		return recs[subj]
	}
	entity(d.Entity)
	total, dead := 0, 0
	for subj, n := range erased {
		entity(entityOf(subj, d.Entity)).Messages += n
		total += n
	}
	for subj, n := range letters {
		entity(entityOf(strings.TrimPrefix(subj, "dlq."), d.Entity)).DeadLetters += n
		dead += n
	}
	for _, r := range recs {
		if err := putEntity(ctx, kv, *r); err != nil {
			return err
		}
	}
	e.metrics.erased.WithLabelValues("stream").Add(float64(total))
	e.metrics.erased.WithLabelValues("dead_letters").Add(float64(dead))
	e.metrics.entities.WithLabelValues(d.Entity.Kind.String()).Inc()
	e.metrics.lag.Observe(now.Sub(d.Time).Seconds())
	e.logger.Info("deletion erased from the stream and the dead letters",
		"seq", d.Seq, "kind", d.Entity.Kind.String(), "messages", total, "dead_letters", dead, "entities", len(recs))
	return nil
}

// entityOf returns the entity of subject, one of the subjects of a
// deletion of del: del itself or, for a consumer, one of its signers.
func entityOf(subject string, del events.Entity) events.Entity {
	if del.Kind == events.KindConsumer && strings.HasPrefix(subject, events.SubjectPrefixSigner) {
		return events.Entity{Kind: events.KindSigner, ConsumerID: del.ID,
			ID: strings.TrimPrefix(subject, events.SubjectPrefixSigner+del.ID+".")}
	}
	return del
}

// eraseBefore erases, overwriting them in the server's storage, the
// messages of s on subject (a filter, wildcards allowed) with a sequence
// lower than before, and adds how many it erased to counts, by subject.
func eraseBefore(ctx context.Context, s jetstream.Stream, subject string, before uint64, counts map[string]int) error {
	return walkBefore(ctx, s, subject, before, func(m *jetstream.RawStreamMsg) error {
		if err := s.SecureDeleteMsg(ctx, m.Sequence); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return err
		}
		counts[m.Subject]++
		return nil
	})
}

// walkBefore calls fn with each message of s on subject with a sequence
// lower than before, in order.
func walkBefore(ctx context.Context, s jetstream.Stream, subject string, before uint64, fn func(*jetstream.RawStreamMsg) error) error {
	for seq := uint64(1); seq < before; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if m.Sequence >= before {
			return nil
		}
		if err := fn(m); err != nil {
			return err
		}
		seq = m.Sequence + 1
	}
	return nil
}

// clearSnapshots deletes the snapshots older than the newest deletion
// erased, once a snapshot at or beyond it is in the bucket: one is taken
// when none is and the oldest deletion waiting has waited half the bound.
func (e *Eraser) clearSnapshots(ctx context.Context, kv jetstream.KeyValue, cur *cursor, rev uint64) error {
	if cur.Seq <= cur.SnapshotsThrough {
		return nil
	}
	now := time.Now().UTC()
	if cur.SnapshotsDue.IsZero() {
		cur.SnapshotsDue = now
		var err error
		if rev, err = writeCursor(ctx, kv, *cur, rev); err != nil {
			return err
		}
	}
	if sn := e.cfg.Snapshots; sn != nil {
		stored, err := sn.Stored(ctx, e.cfg.Stream)
		if err != nil {
			return fmt.Errorf("erasure: %w", err)
		}
		older, newer := 0, false
		for _, s := range stored {
			if s.Position >= cur.Seq {
				newer = true
			} else {
				older++
			}
		}
		if older > 0 && !newer {
			if now.Sub(cur.SnapshotsDue) < e.cfg.Delay/2 {
				return nil // a scheduled snapshot may come first
			}
			if err := e.step("snapshot"); err != nil {
				return err
			}
			info, _, err := e.cfg.Model.Snapshot(ctx)
			if err != nil {
				return fmt.Errorf("erasure: a snapshot to replace the older ones: %w", err)
			}
			if info.Position < cur.Seq {
				return fmt.Errorf("erasure: the snapshot taken is at %d, before the deletion at %d", info.Position, cur.Seq)
			}
		}
		if older > 0 {
			if err := e.step("delete-snapshots"); err != nil {
				return err
			}
			n, err := sn.DeleteBefore(ctx, e.cfg.Stream, cur.Seq)
			e.metrics.erased.WithLabelValues("snapshots").Add(float64(n))
			if err != nil {
				return fmt.Errorf("erasure: %w", err)
			}
			e.logger.Info("snapshots older than the erased deletions deleted", "through", cur.Seq, "snapshots", n)
		}
	}
	mark := Mark{Through: cur.Seq, At: time.Now().UTC()}
	if e.cfg.Snapshots != nil {
		mark.Name = e.cfg.Snapshots.Bucket()
	}
	if err := appendMark(ctx, kv, keySnapshots, mark); err != nil {
		return err
	}
	cur.SnapshotsThrough, cur.SnapshotsDue = cur.Seq, time.Time{}
	_, err := writeCursor(ctx, kv, *cur, rev)
	return err
}
