package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"syscall"
	"testing"
	"time"
)

func TestShutdownCause(t *testing.T) {
	boom := errors.New("api listener: boom")
	tests := []struct {
		name   string
		cancel func(context.CancelCauseFunc)
		want   []any
	}{
		{"SIGTERM", func(c context.CancelCauseFunc) { c(&SignalCause{Signal: syscall.SIGTERM}) }, []any{"signal", "SIGTERM"}},
		{"SIGINT", func(c context.CancelCauseFunc) { c(&SignalCause{Signal: os.Interrupt}) }, []any{"signal", "SIGINT"}},
		{"signal seen through a child context", func(c context.CancelCauseFunc) { c(fmt.Errorf("wrapped: %w", &SignalCause{Signal: syscall.SIGTERM})) }, []any{"signal", "SIGTERM"}},
		{"error", func(c context.CancelCauseFunc) { c(boom) }, []any{"err", boom}},
		{"plain cancel", func(c context.CancelCauseFunc) { c(nil) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(t.Context())
			child, stop := context.WithCancel(parent)
			defer stop()
			tt.cancel(cancel)
			if got := Cause(child); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("shutdownCause = %v, want %v", got, tt.want)
			}
			if !errors.Is(child.Err(), context.Canceled) {
				t.Errorf("child.Err() = %v, want context.Canceled", child.Err())
			}
		})
	}
	if !errors.Is(&SignalCause{Signal: syscall.SIGTERM}, context.Canceled) {
		t.Errorf("a signal cause does not match context.Canceled")
	}
}

// TestNotifyContextCause sends the process a signal: the context ends with
// a cause that names it.
func TestNotifyContextCause(t *testing.T) {
	ctx, stop := NotifyContext(syscall.SIGUSR1)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("context not cancelled 10s after the signal")
	}
	var sc *SignalCause
	if !errors.As(context.Cause(ctx), &sc) || sc.Signal != syscall.SIGUSR1 {
		t.Errorf("cause = %v, want the SIGUSR1 signal cause", context.Cause(ctx))
	}
}

func TestStoppedBySignal(t *testing.T) {
	signalled, cancelSig := context.WithCancelCause(t.Context())
	cancelSig(&SignalCause{Signal: syscall.SIGTERM})
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"no error", signalled, nil, false},
		{"a start-up step cut short by the signal", signalled, fmt.Errorf("JWKS URL: %w", context.Canceled), true},
		{"another error after the signal", signalled, errors.New("stopped before the read model caught up"), false},
		{"cancelled without a signal", cancelled, context.Canceled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StoppedBySignal(tc.ctx, tc.err); got != tc.want {
				t.Errorf("StoppedBySignal(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
