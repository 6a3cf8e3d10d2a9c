package periodic

import (
	"context"
	"testing"
	"time"
)

// TestBackoff: the waits double from initial up to max, each within ±20%,
// and Reset starts them over.
func TestBackoff(t *testing.T) {
	b := Backoff(100*time.Millisecond, time.Second)
	want := []time.Duration{100, 200, 400, 800, 1000, 1000}
	for round := range 2 {
		for i, w := range want {
			w *= time.Millisecond
			if got := b.NextBackOff(); got < w*8/10 || got > w*12/10 {
				t.Errorf("round %d, wait %d = %v, want %v ±20%%", round, i, got, w)
			}
		}
		b.Reset()
	}
}

// TestSleep: Sleep reports whether the wait elapsed, and returns at once
// when the context is done.
func TestSleep(t *testing.T) {
	if !Sleep(t.Context(), time.Millisecond) {
		t.Error("Sleep(1ms) = false, want true")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if Sleep(ctx, time.Hour) {
		t.Error("Sleep on a done context = true, want false")
	}
}
