package erasure

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// keyLease holds the lease: who erases, until when.
const keyLease = "lease"

// lease is this replica's part in the one-actor lease, a compare-and-set
// on one key of the bucket: a replica takes the lease when it is free or
// expired, and renews it (at least every ttl/3) while it holds it. A
// holder whose renewal fails stops acting at once; the lease expires after
// ttl, so a crashed holder is replaced within ttl plus a poll.
type lease struct {
	me    string // replica name and this process's instance
	ttl   time.Duration
	until time.Time // of the lease this replica holds; zero if none
}

type leaseRecord struct {
	Holder string    `json:"holder"`
	Until  time.Time `json:"until"`
}

func newLease(replica string, ttl time.Duration) *lease {
	return &lease{me: replica + "/" + nuid.Next(), ttl: ttl}
}

// still reports whether this replica holds the lease at now, with a
// margin for the clocks of the other replicas.
func (l *lease) still(now time.Time) bool { return now.Add(l.ttl / 3).Before(l.until) }

// due reports whether the lease should be renewed before acting at now:
// a third of it has passed since it was taken or renewed.
func (l *lease) due(now time.Time) bool { return !now.Add(2 * l.ttl / 3).Before(l.until) }

// held reports whether this replica may hold the lease: it took it at its
// last hold, or that hold failed without an answer.
func (l *lease) held() bool { return !l.until.IsZero() }

// hold takes or renews the lease, reporting whether this replica holds
// it.
func (l *lease) hold(ctx context.Context, kv jetstream.KeyValue) (bool, error) {
	now := time.Now()
	val, err := json.Marshal(leaseRecord{Holder: l.me, Until: now.Add(l.ttl)})
	if err != nil {
		return false, err
	}
	e, err := kv.Get(ctx, keyLease)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		_, err = kv.Create(ctx, keyLease, val)
	case err != nil:
	default:
		var cur leaseRecord
		if jerr := json.Unmarshal(e.Value(), &cur); jerr == nil && cur.Holder != l.me && now.Before(cur.Until) {
			l.until = time.Time{}
			return false, nil // another replica's, still valid
		}
		_, err = kv.Update(ctx, keyLease, val, e.Revision())
	}
	if errors.Is(err, jetstream.ErrKeyExists) {
		l.until = time.Time{}
		return false, nil // another replica was first
	}
	if err != nil {
		// Whether the lease is still this replica's is unknown: until
		// stays, so that it is not renewed (still turns false as it
		// passes) but is still given up on the way out (release).
		return false, fmt.Errorf("erasure lease: %w", err)
	}
	l.until = now.Add(l.ttl)
	return true, nil
}

// release gives the lease up, if this replica holds it, so that another
// replica takes over at its next poll rather than after the lease expires.
func (l *lease) release(ctx context.Context, kv jetstream.KeyValue) {
	if !l.held() {
		return
	}
	e, err := kv.Get(ctx, keyLease)
	if err != nil {
		return
	}
	var cur leaseRecord
	if json.Unmarshal(e.Value(), &cur) == nil && cur.Holder == l.me {
		_ = kv.Delete(ctx, keyLease, jetstream.LastRevision(e.Revision()))
	}
	l.until = time.Time{}
}
