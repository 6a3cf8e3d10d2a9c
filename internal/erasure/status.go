package erasure

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/projector"
)

// StatusConfig names the places Status looks in.
type StatusConfig struct {
	JS     jetstream.JetStream
	Bucket string // the erasure bucket; DefaultBucket when ""
	// Live, when set, looks in the places themselves, besides the
	// evidence: the stream and its dead letters are read (which needs
	// lookupd's permissions), and the snapshot bucket listed. Without it,
	// Status reads the erasure bucket alone (the accounting service,
	// which never reads the stream).
	Live bool
	// Stream and DLQStream name the source stream and its dead letters
	// (Live needs them; without them, the places are named as the
	// evidence recorded them).
	Stream    string
	DLQStream string
	Snapshots *projector.Snapshots // nil: SnapshotBucket's, if set
	// SnapshotBucket names the snapshot bucket when Snapshots is nil
	// ("": the snapshots are reported from the evidence alone).
	SnapshotBucket string
}

// Report is what remains of a person, per entity the id names.
type Report struct {
	PersonID string         `json:"person_id"`
	Entities []EntityStatus `json:"entities"` // none: nothing known of the id
}

// EntityStatus is the erasure of one entity.
type EntityStatus struct {
	Kind       string `json:"kind"` // consumer, business_contact or authorized_signer
	ID         string `json:"id"`
	ConsumerID string `json:"consumer_id,omitempty"` // a signer's consumer
	// Deleted says that the entity (or, for a signer, its consumer) was
	// deleted by the event at DeletionSeq, of stream time DeletedAt.
	Deleted     bool      `json:"deleted"`
	DeletionSeq uint64    `json:"deletion_seq,omitempty"`
	DeletedAt   time.Time `json:"deleted_at,omitzero"`
	// ErasedWith names the consumer whose deletion erased this signer.
	ErasedWith string  `json:"erased_with,omitempty"`
	Places     []Place `json:"places,omitempty"` // empty when not deleted
	// Complete: nothing of the entity remains in any place; CompletedAt
	// is when the last place was cleared.
	Complete    bool      `json:"complete"`
	CompletedAt time.Time `json:"completed_at,omitzero"`
}

// Place is one place the entity's data was kept.
type Place struct {
	Place string `json:"place"` // stream, dead_letters, snapshots, replica
	Name  string `json:"name"`  // the stream's, the bucket's or the replica's
	// Remains counts what is left from before the deletion there
	// (messages, snapshots); -1: not known to be cleared yet.
	Remains int       `json:"remains"`
	At      time.Time `json:"cleared_at,omitzero"` // zero: not yet, or not recorded
}

// Clear reports whether nothing remains in p.
func (p Place) Clear() bool { return p.Remains == 0 }

// Status reports what remains of the person id in every place.
func Status(ctx context.Context, cfg StatusConfig, personID string) (Report, error) {
	id := strings.ToLower(personID)
	rep := Report{PersonID: id}
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultBucket
	}
	if cfg.Snapshots == nil && cfg.SnapshotBucket != "" {
		var err error
		if cfg.Snapshots, err = projector.NewSnapshots(cfg.JS, projector.SnapshotsConfig{Bucket: cfg.SnapshotBucket}); err != nil {
			return rep, err
		}
	}
	kv, err := Bucket(ctx, cfg.JS, cfg.Bucket, false)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		kv, err = nil, nil
	}
	if err != nil {
		return rep, err
	}
	s := &statusReader{cfg: cfg, kv: kv}
	if cfg.Live {
		if s.stream, err = cfg.JS.Stream(ctx, cfg.Stream); err != nil {
			return rep, fmt.Errorf("stream %s: %w", cfg.Stream, err)
		}
	}
	ents, err := s.entities(ctx, id)
	if err != nil {
		return rep, err
	}
	for _, ent := range ents {
		st, err := s.status(ctx, ent)
		if err != nil {
			return rep, err
		}
		rep.Entities = append(rep.Entities, st)
	}
	return rep, nil
}

type statusReader struct {
	cfg    StatusConfig
	kv     jetstream.KeyValue // nil: no evidence yet
	stream jetstream.Stream   // nil unless Live
}

// entities returns the entities whose id is id, known to the evidence or
// (Live) to the stream: a consumer, a business contact, signers (one per
// consumer they sign for).
func (s *statusReader) entities(ctx context.Context, id string) ([]events.Entity, error) {
	var out []events.Entity
	add := func(e events.Entity) {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	if s.kv != nil {
		keys, err := s.kv.ListKeysFiltered(ctx, prefixEntity+"*."+id, prefixEntity+"authorized_signer.*."+id)
		if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, fmt.Errorf("erasure evidence: %w", err)
		}
		if keys != nil {
			for key := range keys.Keys() {
				add(entityOfKey(key))
			}
			_ = keys.Stop()
		}
	}
	if s.stream == nil {
		return out, nil
	}
	for _, ent := range []events.Entity{{Kind: events.KindConsumer, ID: id, ConsumerID: id}, {Kind: events.KindBusinessContact, ID: id}} {
		if _, err := s.stream.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(ent.Subject())); err == nil {
			add(ent)
		} else if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, fmt.Errorf("stream: %w", err)
		}
	}
	for seq := uint64(1); ; {
		m, err := s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(events.SubjectPrefixSigner+"*."+id))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		ent := entityOf(m.Subject, events.Entity{Kind: events.KindConsumer,
			ID: strings.TrimSuffix(strings.TrimPrefix(m.Subject, events.SubjectPrefixSigner), "."+id)})
		add(ent)
		last, err := s.stream.GetLastMsgForSubject(ctx, ent.Subject())
		if err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		seq = last.Sequence + 1 // the next signer entity of this id is past this one's messages
	}
}

// entityOfKey is the entity of an evidence key.
func entityOfKey(key string) events.Entity {
	parts := strings.Split(strings.TrimPrefix(key, prefixEntity), ".")
	switch {
	case parts[0] == "consumer" && len(parts) == 2:
		return events.Entity{Kind: events.KindConsumer, ID: parts[1], ConsumerID: parts[1]}
	case parts[0] == "business_contact" && len(parts) == 2:
		return events.Entity{Kind: events.KindBusinessContact, ID: parts[1]}
	case parts[0] == "authorized_signer" && len(parts) == 3:
		return events.Entity{Kind: events.KindSigner, ConsumerID: parts[1], ID: parts[2]}
	}
	return events.Entity{}
}

// deletion returns the deletion that erases ent: the evidence's, else
// (Live) the stream's newest event of ent, or of a signer's consumer,
// when it is a deletion.
func (s *statusReader) deletion(ctx context.Context, ent events.Entity) (rec EntityRecord, ok bool, err error) {
	if s.kv != nil {
		if rec, ok, err = getEntity(ctx, s.kv, entityKey(ent.Kind.String(), ent.ConsumerID, ent.ID)); err != nil || ok {
			return rec, ok, err
		}
	}
	if s.stream == nil {
		return rec, false, nil
	}
	cands := []string{ent.Subject()}
	if ent.Kind == events.KindSigner {
		cands = append(cands, events.SubjectPrefixConsumer+ent.ConsumerID)
	}
	for i, subj := range cands {
		seq, at, del, err := deletionOn(ctx, s.stream, subj)
		if err != nil {
			return rec, false, err
		}
		if del && seq > rec.Seq {
			rec, ok = EntityRecord{Seq: seq, DeletedAt: at}, true
			if i == 1 {
				rec.ErasedWith = ent.ConsumerID
			}
		}
	}
	return rec, ok, nil
}

// deletionOn returns the deletion the stream's newest event on subject
// is, if it is one.
func deletionOn(ctx context.Context, stream jetstream.Stream, subject string) (seq uint64, at time.Time, ok bool, err error) {
	m, err := stream.GetLastMsgForSubject(ctx, subject)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return 0, time.Time{}, false, nil
	}
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("stream: %w", err)
	}
	ev, derr := events.DecodeMsg(m.Subject, m.Header, m.Data)
	if derr != nil { // an invalid newest event: not a deletion
		return 0, time.Time{}, false, nil //nolint:nilerr // not an error of the status
	}
	switch ev.Data.(type) {
	case events.ConsumerDeleted, events.BusinessContactDeleted, events.SignerDeleted:
		return m.Sequence, m.Time, true, nil
	}
	return 0, time.Time{}, false, nil
}

func (s *statusReader) status(ctx context.Context, ent events.Entity) (EntityStatus, error) {
	st := EntityStatus{Kind: ent.Kind.String(), ID: ent.ID}
	if ent.Kind == events.KindSigner {
		st.ConsumerID = ent.ConsumerID
	}
	rec, ok, err := s.deletion(ctx, ent)
	if err != nil || !ok {
		return st, err
	}
	if s.stream != nil { // a re-creation after the deletion: not deleted
		if last, err := s.stream.GetLastMsgForSubject(ctx, ent.Subject()); err == nil && last.Sequence > rec.Seq &&
			rec.ErasedWith == "" {
			return st, nil
		}
	}
	st.Deleted, st.DeletionSeq, st.DeletedAt, st.ErasedWith = true, rec.Seq, rec.DeletedAt, rec.ErasedWith
	places, err := s.places(ctx, ent, rec)
	if err != nil {
		return st, err
	}
	st.Places, st.Complete = places, true
	for _, p := range places {
		st.Complete = st.Complete && p.Clear()
		if p.At.After(st.CompletedAt) {
			st.CompletedAt = p.At
		}
	}
	if !st.Complete {
		st.CompletedAt = time.Time{}
	}
	return st, nil
}

// places reports each place for ent, deleted by rec.
func (s *statusReader) places(ctx context.Context, ent events.Entity, rec EntityRecord) ([]Place, error) {
	erased := -1
	if !rec.ErasedAt.IsZero() {
		erased = 0
	}
	stream := Place{Place: "stream", Name: cmp.Or(s.cfg.Stream, rec.Stream), Remains: erased, At: rec.ErasedAt}
	dead := Place{Place: "dead_letters", Name: cmp.Or(s.cfg.DLQStream, rec.DLQStream), Remains: erased, At: rec.ErasedAt}
	if s.stream != nil {
		var err error
		if stream.Remains, err = s.count(ctx, s.stream, subjects(ent), rec.Seq); err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		dlq, err := s.cfg.JS.Stream(ctx, s.cfg.DLQStream)
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			dead.Remains = 0
		case err != nil:
			return nil, fmt.Errorf("dead-letter stream %s: %w", s.cfg.DLQStream, err)
		default:
			var dl []string
			for _, subj := range subjects(ent) {
				dl = append(dl, dlqSubject(subj))
			}
			if dead.Remains, err = s.count(ctx, dlq, dl, math.MaxUint64); err != nil {
				return nil, fmt.Errorf("dead-letter stream %s: %w", s.cfg.DLQStream, err)
			}
		}
	}
	out := []Place{stream, dead}
	more, err := s.evidencePlaces(ctx, rec.Seq)
	return append(out, more...), err
}

func (s *statusReader) count(ctx context.Context, st jetstream.Stream, subjects []string, before uint64) (int, error) {
	total := 0
	for _, subj := range subjects {
		n, err := countBefore(ctx, st, subj, before)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// countBefore counts the messages of s on subject with a sequence lower
// than before (what eraseBefore would erase).
func countBefore(ctx context.Context, s jetstream.Stream, subject string, before uint64) (int, error) {
	n := 0
	err := walkBefore(ctx, s, subject, before, func(*jetstream.RawStreamMsg) error { n++; return nil })
	return n, err
}

// evidencePlaces reports the snapshots and each replica's files for a
// deletion at seq.
func (s *statusReader) evidencePlaces(ctx context.Context, seq uint64) ([]Place, error) {
	var out []Place
	snaps := Place{Place: "snapshots", Remains: -1}
	if s.cfg.Snapshots != nil {
		snaps.Name = s.cfg.Snapshots.Bucket()
	}
	if s.kv != nil {
		marks, _, err := readMarks(ctx, s.kv, keySnapshots)
		if err != nil {
			return nil, err
		}
		if at, ok := firstAt(marks, seq); ok {
			snaps.Remains, snaps.At = 0, at
		}
		if n := len(marks); n > 0 && snaps.Name == "" {
			snaps.Name = marks[n-1].Name
		}
	}
	if s.cfg.Live && s.cfg.Snapshots != nil {
		stored, err := s.cfg.Snapshots.Stored(ctx, s.cfg.Stream)
		if err != nil {
			return nil, err
		}
		snaps.Remains = 0
		for _, st := range stored {
			if st.Position < seq {
				snaps.Remains++
			}
		}
	}
	out = append(out, snaps)
	if s.kv == nil {
		return out, nil
	}
	keys, err := s.kv.ListKeysFiltered(ctx, prefixReplica+">")
	if err != nil && !errors.Is(err, jetstream.ErrNoKeysFound) {
		return nil, fmt.Errorf("erasure evidence: %w", err)
	}
	if keys == nil {
		return out, nil
	}
	defer func() { _ = keys.Stop() }()
	for key := range keys.Keys() {
		marks, _, err := readMarks(ctx, s.kv, key)
		if err != nil {
			return nil, err
		}
		p := Place{Place: "replica", Name: strings.TrimPrefix(key, prefixReplica), Remains: -1}
		if at, ok := firstAt(marks, seq); ok {
			p.Remains, p.At = 0, at
		}
		out = append(out, p)
	}
	return out, nil
}
