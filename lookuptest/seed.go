package lookuptest

import (
	"context"
	"fmt"
	"sync"

	"github.com/lookup/persons/events"
)

// EventSource is the CloudEvents source of the events Upsert and Delete
// build.
const EventSource = "lookuptest"

// Versions gives a test's events their entity versions, so that the test
// need not count them: the first event of an entity is version 1, each
// one after it, a deletion included, one more than the highest the
// entity has had. Server and lookupdcontainer.Container keep one (their
// Upsert and Delete use it, and their Publish and Seed raise it with the
// versions of the events they are given); a test that publishes through
// its own events.Publisher may keep its own. Its zero value is ready to
// use, and it is safe for concurrent use.
type Versions struct {
	mu   sync.Mutex
	last map[events.Entity]uint64
}

// Upsert returns the event of data, the upsert of an entity
// (events.Consumer, events.BusinessContact or events.Signer), at the
// entity's next version. Data the contract refuses is an
// *events.InvalidEventError and takes no version.
func (v *Versions) Upsert(data any) (events.Event, error) {
	switch data.(type) {
	case events.Consumer, events.BusinessContact, events.Signer:
		return v.next(data)
	}
	return events.Event{}, fmt.Errorf("lookuptest: upsert of a %T: want an events.Consumer, events.BusinessContact or events.Signer", data)
}

// Delete returns the event that deletes an entity at its next version.
// data is the deletion (events.ConsumerDeleted, ...) or the entity's
// upsert data (an events.Consumer, ...), whose ids it takes.
func (v *Versions) Delete(data any) (events.Event, error) {
	switch d := data.(type) {
	case events.Consumer:
		data = events.ConsumerDeleted{ConsumerID: d.ConsumerID}
	case events.BusinessContact:
		data = events.BusinessContactDeleted{ContactID: d.ContactID}
	case events.Signer:
		data = events.SignerDeleted{SignerID: d.SignerID, ConsumerID: d.ConsumerID}
	case events.ConsumerDeleted, events.BusinessContactDeleted, events.SignerDeleted:
	default:
		return events.Event{}, fmt.Errorf("lookuptest: delete of a %T: want one of the six data types of events", data)
	}
	return v.next(data)
}

// Observe raises the version of e's entity to e's, if higher: what
// Publish and Seed call with the events they are given, so that a later
// Upsert or Delete of the entity comes after them.
func (v *Versions) Observe(e events.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	k := key(e)
	if v.last == nil {
		v.last = map[events.Entity]uint64{}
	}
	v.last[k] = max(v.last[k], e.EntityVersion)
}

// next returns the event of data at its entity's next version, checked
// against the contract before the version is taken.
func (v *Versions) next(data any) (events.Event, error) {
	e, err := events.NewEvent(EventSource, 1, data)
	if err != nil {
		return events.Event{}, fmt.Errorf("lookuptest: %w", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	k := key(e)
	e.EntityVersion = v.last[k] + 1
	if _, err := events.NewMsg(e); err != nil {
		return events.Event{}, fmt.Errorf("lookuptest: %w", err)
	}
	if v.last == nil {
		v.last = map[events.Entity]uint64{}
	}
	v.last[k] = e.EntityVersion
	return e, nil
}

// key is e's entity, its ids written as the service keeps them (lower
// case), so that an id's spellings are one entity.
func key(e events.Event) events.Entity {
	k := e.Entity()
	if id, ok := events.NormalizeID(k.ID); ok {
		k.ID = id
	}
	if id, ok := events.NormalizeID(k.ConsumerID); ok {
		k.ConsumerID = id
	}
	return k
}

// Upsert publishes the upsert of each of data (events.Consumer,
// events.BusinessContact, events.Signer) at its entity's next version
// (see Versions), as Seed does: all are checked before any is published,
// and it returns the last one's sequence once the read model has applied
// it.
func (s *Server) Upsert(ctx context.Context, data ...any) (uint64, error) {
	return seedWith(ctx, s, s.versions.Upsert, data)
}

// Delete publishes the deletion of each of data (an entity's upsert
// data, or its deletion: events.ConsumerDeleted, ...) at its entity's
// next version, as Upsert does.
func (s *Server) Delete(ctx context.Context, data ...any) (uint64, error) {
	return seedWith(ctx, s, s.versions.Delete, data)
}

// seedWith builds the events of data with build and seeds them through
// l. A version taken by an event that is then not published leaves a gap
// in the entity's versions, which the service does not mind.
func seedWith(ctx context.Context, l Lookupd, build func(any) (events.Event, error), data []any) (uint64, error) {
	es := make([]events.Event, len(data))
	for i, d := range data {
		e, err := build(d)
		if err != nil {
			return 0, fmt.Errorf("%w (event %d of %d; nothing published)", err, i+1, len(data))
		}
		es[i] = e
	}
	return l.Seed(ctx, es...)
}
