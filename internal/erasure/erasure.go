// Package erasure forgets a deleted entity everywhere the service keeps
// it outside a replica's own files: the source stream, the dead letters
// and the snapshots (docs/decisions/0028-erasure.md).
//
// The contract:
//
//   - Once a deletion of an entity (a consumer, a business contact, a
//     signer) is applied by the projector, every message of that entity
//     published before the deletion is erased from the source stream
//     (SecureDeleteMsg: overwritten, not only unlinked); a consumer's
//     deletion erases its signers' earlier messages too. The deletion
//     itself stays, so a stale upsert published later still loses the
//     version comparison and a replica rebuilt from zero reaches the same
//     state.
//   - Every dead letter of those subjects is erased from the dead-letter
//     stream.
//   - No snapshot taken before the deletion stays in the snapshot bucket:
//     a snapshot at or beyond it is written first, then the older ones are
//     deleted.
//   - Exactly one replica acts, the holder of a lease in the erasure
//     bucket (a JetStream key-value bucket); the others stand by. Each
//     step is idempotent and the cursor of erased deletions moves only
//     after its deletion is erased everywhere, so a crash, a SIGTERM or a
//     lost lease at any point is followed by the same steps again.
//   - The bucket holds the evidence: when each deletion was erased from
//     the stream and the dead letters and how many messages went, when
//     the snapshots were cleared, and when each replica's files were
//     compacted beyond a position (internal/replica's compaction). Status
//     reads it, and the places themselves, for `lookupd erasure status`
//     and the privacy officer's page. It holds ids and times, never
//     personal data; neither do the logs and metrics.
//
// Files: erasure.go (the Eraser and its loop), lease.go, erase.go (the
// stream and the dead letters), evidence.go (the bucket's records),
// status.go, metrics.go.
package erasure

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/projector"
)

// DefaultBucket is the erasure bucket's default name.
const DefaultBucket = "lookup-erasure"

// DefaultDelay is the default bound: the longest time from a deletion's
// arrival in the stream to its erasure from every place.
const DefaultDelay = 24 * time.Hour

// Model is the replica's read model, as the eraser needs it.
type Model interface {
	// Deletions calls fn with each deletion the model has applied after
	// stream sequence after, in stream order.
	Deletions(ctx context.Context, after uint64, fn func(projector.Deletion) error) error
	// Snapshot writes a snapshot of the model to the bucket
	// (ErrNotCaughtUp-like errors when it cannot yet).
	Snapshot(ctx context.Context) (projector.SnapshotInfo, string, error)
	// Compacted tells how far the replica's files are compacted.
	Compacted() (replica.CompactionInfo, error)
}

// Config configures an Eraser.
type Config struct {
	JS        jetstream.JetStream
	Stream    string // the source stream the model reads (LOOKUP_STREAM)
	DLQStream string // its dead-letter stream
	Bucket    string // the erasure bucket; DefaultBucket when ""
	// Snapshots is the snapshot bucket (nil: snapshots are off here; run
	// every replica with the same setting).
	Snapshots *projector.Snapshots
	Model     Model
	Replica   string        // this replica's name, in the lease and the evidence
	Delay     time.Duration // the bound; DefaultDelay when 0
	// Poll is how often the lease holder looks for new deletions and
	// renews the lease; derived from Delay when 0 (Delay/20, between 1s
	// and 10s). The lease lasts three polls (3s at least).
	Poll       time.Duration
	Registerer prometheus.Registerer // nil: no metrics
	Logger     *slog.Logger          // nil: discard
}

// Eraser erases deleted entities from the stream, the dead letters and
// the snapshots, when it holds the lease.
type Eraser struct {
	cfg     Config
	lease   *lease
	metrics *metrics
	logger  *slog.Logger
	// hook, in tests, runs before each step named by what ("stream",
	// "dlq", "cursor", "snapshot", "delete-snapshots"); an error stops
	// the pass there.
	hook func(what string) error
}

// New returns an Eraser of cfg. It registers its metrics.
func New(cfg Config) (*Eraser, error) {
	if cfg.Bucket == "" {
		cfg.Bucket = DefaultBucket
	}
	if cfg.Delay <= 0 {
		cfg.Delay = DefaultDelay
	}
	if cfg.Poll <= 0 {
		cfg.Poll = min(max(cfg.Delay/20, time.Second), 10*time.Second)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	m, err := newMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	m.bound.Set(cfg.Delay.Seconds())
	e := &Eraser{cfg: cfg, metrics: m, logger: cfg.Logger.With("component", "erasure")}
	// The lease outlives three polls, so that its holder renews it in time.
	e.lease = newLease(cfg.Replica, max(3*cfg.Poll, 3*time.Second))
	return e, nil
}

// Run takes part in the lease and, while it holds it, erases each
// deletion the model applies, until ctx is done. Failures are logged,
// counted and retried at the next poll; it returns ctx's error.
func (e *Eraser) Run(ctx context.Context) error {
	t := time.NewTicker(e.cfg.Poll)
	defer t.Stop()
	var kv jetstream.KeyValue
	for {
		var err error
		if kv == nil {
			if kv, err = Bucket(ctx, e.cfg.JS, e.cfg.Bucket, true); err == nil {
				err = register(ctx, kv, e.cfg.Replica)
			}
			if err != nil {
				kv = nil
			}
		}
		if err == nil {
			err = e.pass(ctx, kv)
		}
		if err != nil && ctx.Err() == nil {
			e.metrics.failures.Inc()
			e.logger.Error("erasure pass failed; retrying", "err", err, "retry_in", e.cfg.Poll)
		}
		select {
		case <-ctx.Done():
			e.stop(ctx, kv)
			return ctx.Err()
		case <-t.C:
		}
	}
}

// stop gives the lease up, if held, so that another replica takes over
// at its next poll rather than once the lease expires.
func (e *Eraser) stop(ctx context.Context, kv jetstream.KeyValue) {
	e.metrics.leader.Set(0)
	if !e.lease.held() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if kv == nil {
		var err error
		if kv, err = Bucket(ctx, e.cfg.JS, e.cfg.Bucket, false); err != nil {
			return
		}
	}
	e.lease.release(ctx, kv)
}

// pass measures how long this replica's files have held a deletion's
// values; then, if this replica holds (or takes) the lease, erases what
// the model deleted since the cursor, then the snapshots older than the
// newest deletion erased.
func (e *Eraser) pass(ctx context.Context, kv jetstream.KeyValue) error {
	if err := e.measureModel(ctx); err != nil {
		return err
	}
	held, err := e.lease.hold(ctx, kv)
	e.metrics.leader.Set(boolGauge(held))
	if err != nil || !held {
		e.metrics.pending(nil, cursor{}, time.Now()) // the holder's to report
		return err
	}
	cur, rev, err := readCursor(ctx, kv)
	if err != nil {
		return err
	}
	var pending []projector.Deletion
	err = e.cfg.Model.Deletions(ctx, cur.Seq, func(d projector.Deletion) error {
		pending = append(pending, d)
		if len(pending) == 1000 {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return fmt.Errorf("read the model's deletions: %w", err)
	}
	e.metrics.pending(pending, cur, time.Now())
	for _, d := range pending {
		if e.lease.due(time.Now()) {
			if held, err := e.lease.hold(ctx, kv); err != nil || !held {
				return err // the lease has moved; the next pass asks again
			}
		}
		if err := e.erase(ctx, kv, d); err != nil {
			return err
		}
		if err := e.step("cursor"); err != nil {
			return err
		}
		cur.Seq = d.Seq
		if rev, err = writeCursor(ctx, kv, cur, rev); err != nil {
			return err
		}
	}
	return e.clearSnapshots(ctx, kv, &cur, rev)
}

var errEnough = errors.New("enough for one pass")

// measureModel sets the age of the oldest deletion whose values this
// replica's files may still hold (applied after the last compaction).
func (e *Eraser) measureModel(ctx context.Context) error {
	c, err := e.cfg.Model.Compacted()
	if err != nil {
		return fmt.Errorf("the replica's compaction: %w", err)
	}
	age := 0.0
	err = e.cfg.Model.Deletions(ctx, c.Position, func(d projector.Deletion) error {
		if !d.Time.IsZero() {
			age = time.Since(d.Time).Seconds()
		}
		return errEnough
	})
	if err != nil && !errors.Is(err, errEnough) {
		return fmt.Errorf("read the model's deletions: %w", err)
	}
	e.metrics.oldest.WithLabelValues("model").Set(age)
	return nil
}

func (e *Eraser) step(what string) error {
	if e.hook == nil {
		return nil
	}
	return e.hook(what)
}

func boolGauge(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
