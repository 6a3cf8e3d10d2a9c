package periodic

import (
	"context"
	"testing"
	"time"
)

// TestEvery: fn runs at each tick, not at once, and Every returns once the
// context is done.
func TestEvery(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	calls := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, 5*time.Millisecond, func(now time.Time) {
			if now.Before(start) {
				t.Errorf("tick at %v, before Every started at %v", now, start)
			}
			if calls++; calls == 3 {
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context was cancelled")
	}
	if calls != 3 {
		t.Errorf("fn called %d times, want 3 (none after the cancel)", calls)
	}
	if d := time.Since(start); d < 15*time.Millisecond {
		t.Errorf("three ticks of 5ms took %v", d)
	}
}

// TestEveryReturnsOnDoneContext: a context already done means no call.
func TestEveryReturnsOnDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	Every(ctx, time.Hour, func(time.Time) { t.Error("fn called after the context was done") })
}
