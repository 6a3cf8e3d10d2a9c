package periodic

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestEvery: fn runs at each tick, one interval apart and not at once,
// with the tick's time, and Every returns once the context is done. The
// bubble's clock moves only when every goroutine in it is blocked, so the
// ticks come at exact times whatever the machine's load.
func TestEvery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		var mu sync.Mutex // the bubble orders the calls, not the race detector
		var calls []time.Time
		done := make(chan struct{})
		go func() {
			defer close(done)
			Every(ctx, interval, func(now time.Time) {
				mu.Lock()
				defer mu.Unlock()
				if calls = append(calls, now); len(calls) == 3 {
					cancel()
				}
			})
		}()
		time.Sleep(interval - time.Nanosecond)
		synctest.Wait()
		mu.Lock()
		early := len(calls)
		mu.Unlock()
		if early != 0 {
			t.Fatalf("fn called %d times before the first interval had passed", early)
		}
		<-done
		if len(calls) != 3 {
			t.Fatalf("fn called %d times, want 3 (none after the cancel)", len(calls))
		}
		for i, now := range calls {
			if want := start.Add(time.Duration(i+1) * interval); !now.Equal(want) {
				t.Errorf("call %d at %v, want %v", i, now.Sub(start), want.Sub(start))
			}
		}
		if d := time.Since(start); d != 3*interval {
			t.Errorf("Every returned %v after it started, want %v (at the third tick)", d, 3*interval)
		}
	})
}

// TestEveryDropsMissedTicks: a call longer than the interval delays the
// next one; the ticks missed meanwhile are dropped, not run in a burst.
func TestEveryDropsMissedTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		var calls []time.Duration
		done := make(chan struct{})
		go func() {
			defer close(done)
			Every(ctx, interval, func(now time.Time) {
				calls = append(calls, now.Sub(start))
				if len(calls) == 1 {
					time.Sleep(3*interval + interval/2) // misses the ticks at 2s, 3s and 4s but one
				}
				if len(calls) == 3 {
					cancel()
				}
			})
		}()
		<-done
		// The ticker holds one tick (2s) while fn sleeps until 4.5s; the next
		// comes at 5s.
		want := []time.Duration{interval, 2 * interval, 5 * interval}
		if len(calls) != len(want) {
			t.Fatalf("calls at %v, want %v", calls, want)
		}
		for i := range want {
			if calls[i] != want[i] {
				t.Errorf("calls at %v, want %v", calls, want)
				break
			}
		}
	})
}

// TestEveryReturnsOnDoneContext: a context already done means no call.
func TestEveryReturnsOnDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	Every(ctx, time.Hour, func(time.Time) { t.Error("fn called after the context was done") })
}
