package lifecycle

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/projector"
)

// fakeProjection is a Projection that has caught up when caughtUp is closed.
type fakeProjection struct {
	caughtUp  chan struct{}
	snapshots atomic.Int64
}

func (f *fakeProjection) Run(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
func (f *fakeProjection) Progress() projector.Progress {
	return projector.Progress{AppliedSeq: 7, TargetSeq: 9}
}
func (f *fakeProjection) CaughtUp() <-chan struct{} { return f.caughtUp }
func (f *fakeProjection) Snapshot(context.Context) (projector.SnapshotInfo, string, error) {
	f.snapshots.Add(1)
	return projector.SnapshotInfo{}, "", nil
}
func (f *fakeProjection) SnapshotEvery(ctx context.Context, _ time.Duration, _ *slog.Logger) {
	<-ctx.Done()
}

func TestProject(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	t.Run("until caught up: a snapshot, then a clean stop", func(t *testing.T) {
		p := &fakeProjection{caughtUp: make(chan struct{})}
		close(p.caughtUp)
		if err := Project(t.Context(), p, ProjectConfig{UntilCaughtUp: true, Snapshot: true, Logger: logger}); err != nil {
			t.Fatalf("Project = %v, want nil", err)
		}
		if n := p.snapshots.Load(); n != 1 {
			t.Errorf("%d snapshots, want 1", n)
		}
	})
	t.Run("stopped before catching up", func(t *testing.T) {
		p := &fakeProjection{caughtUp: make(chan struct{})}
		ctx, cancel := context.WithCancel(t.Context())
		var shown atomic.Bool
		go func() {
			for !shown.Load() {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		err := Project(ctx, p, ProjectConfig{UntilCaughtUp: true, Logger: logger,
			Progress: func(ctx context.Context) { shown.Store(true); <-ctx.Done() }})
		if err == nil || !strings.Contains(err.Error(), "applied sequence 7 of 9") {
			t.Errorf("Project = %v, want the error naming the applied sequence", err)
		}
	})
}
