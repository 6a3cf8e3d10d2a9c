package replica

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// TestSnapshotEvery: with a bucket, snapshots are written on the interval
// once caught up, until ctx is done; without one it returns at once.
func TestSnapshotEvery(t *testing.T) {
	_, js := testkit.StartNATS(t)
	testkit.PersonsStream(t, js)
	publishConsumers(t, js, 0, 10, 1)

	plain := open(t, js, t.TempDir(), nil)
	done := make(chan struct{})
	go func() {
		plain.SnapshotEvery(t.Context(), time.Millisecond, slog.New(slog.DiscardHandler))
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("SnapshotEvery without a bucket did not return")
	}
	if err := plain.Close(); err != nil {
		t.Fatal(err)
	}

	sn, err := projector.NewSnapshots(js, projector.SnapshotsConfig{Bucket: "SNAPS", Keep: 3})
	if err != nil {
		t.Fatal(err)
	}
	r := open(t, js, t.TempDir(), func(c *Config) { c.Snapshots = sn })
	run(t, r)
	waitCaughtUp(t, r, 10)
	ctx, cancel := context.WithCancel(t.Context())
	done = make(chan struct{})
	go func() { r.SnapshotEvery(ctx, 20*time.Millisecond, slog.New(slog.DiscardHandler)); close(done) }()
	testkit.WaitFor(t, 30*time.Second, func() error {
		obs, err := js.ObjectStore(t.Context(), "SNAPS")
		if err != nil {
			return err
		}
		list, err := obs.List(t.Context())
		if err != nil {
			return err
		}
		if len(list) == 0 {
			return errors.New("no snapshot yet")
		}
		return nil
	})
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("SnapshotEvery did not stop with its context")
	}
}
