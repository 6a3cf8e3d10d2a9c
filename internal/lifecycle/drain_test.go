package lifecycle

import (
	"context"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

func TestDelayShutdown(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	tests := []struct {
		name     string
		parent   context.Context
		delay    time.Duration
		wantWait bool
	}{
		{"signal with a delay waits", cancelled, 200 * time.Millisecond, true},
		{"no delay", cancelled, 0, false},
		{"a failed component does not wait", t.Context(), time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &http.Server{}
			done := make(chan time.Duration, 1)
			start := time.Now()
			go func() {
				delayShutdown(tt.parent, srv, tt.delay, slog.New(slog.DiscardHandler))
				done <- time.Since(start)
			}()
			select {
			case got := <-done:
				if tt.wantWait && got < tt.delay {
					t.Errorf("returned after %v, want at least %v", got, tt.delay)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("still waiting after 30s, want no wait")
			}
		})
	}
}
