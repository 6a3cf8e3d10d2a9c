package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lookup/persons/internal/logtest"
)

func TestShutdownCause(t *testing.T) {
	boom := errors.New("api listener: boom")
	tests := []struct {
		name   string
		cancel func(context.CancelCauseFunc)
		want   []any
	}{
		{"SIGTERM", func(c context.CancelCauseFunc) { c(&signalCause{sig: syscall.SIGTERM}) }, []any{"signal", "SIGTERM"}},
		{"SIGINT", func(c context.CancelCauseFunc) { c(&signalCause{sig: os.Interrupt}) }, []any{"signal", "SIGINT"}},
		{"signal seen through a child context", func(c context.CancelCauseFunc) { c(fmt.Errorf("wrapped: %w", &signalCause{sig: syscall.SIGTERM})) }, []any{"signal", "SIGTERM"}},
		{"error", func(c context.CancelCauseFunc) { c(boom) }, []any{"err", boom}},
		{"plain cancel", func(c context.CancelCauseFunc) { c(nil) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent, cancel := context.WithCancelCause(context.Background())
			child, stop := context.WithCancel(parent)
			defer stop()
			tt.cancel(cancel)
			if got := shutdownCause(child); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("shutdownCause = %v, want %v", got, tt.want)
			}
			if !errors.Is(child.Err(), context.Canceled) {
				t.Errorf("child.Err() = %v, want context.Canceled", child.Err())
			}
		})
	}
	if !errors.Is(&signalCause{sig: syscall.SIGTERM}, context.Canceled) {
		t.Errorf("a signal cause does not match context.Canceled")
	}
}

// TestServeLogsTheSignal checks that the shutdown log line of serve names
// the signal that started it.
func TestServeLogsTheSignal(t *testing.T) {
	ns := runNATS(t)
	createStream(t, jetStream(t, ns), "PERSONS")
	environ := serveEnv(t, ns, t.TempDir())
	environ["LOOKUP_LOG_FORMAT"] = "json"
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p := &program{stdout: &logtest.Buffer{}, stderr: &logtest.Buffer{}, done: make(chan error, 1)}
	go func() { p.done <- run(ctx, []string{"serve"}, env(environ), p.stdout, p.stderr) }()
	waitReady(t, p.addrs(t)["admin"])
	cancel(&signalCause{sig: syscall.SIGTERM})
	if err := p.wait(t, 30*time.Second); err != nil {
		t.Fatalf("serve: %v\nstderr:\n%s", err, p.stderr)
	}
	var line string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(l, `"msg":"shutting down"`) {
			line = l
		}
	}
	if !strings.Contains(line, `"signal":"SIGTERM"`) || !strings.Contains(line, `"drain_timeout":"20s"`) {
		t.Errorf("shutdown line = %q, want signal SIGTERM and drain_timeout 20s", line)
	}
}

// TestLogDurationUnits holds the documented units of durations in logs:
// nanoseconds in JSON, a Go duration string in text.
func TestLogDurationUnits(t *testing.T) {
	tests := []struct {
		format string
		d      time.Duration
		want   string
	}{
		{"json", 1520 * time.Microsecond, `"duration":1520000`},
		{"json", 10 * time.Second, `"duration":10000000000`},
		{"text", 1520 * time.Microsecond, `duration=1.52ms`},
		{"text", 10 * time.Second, `duration=10s`},
	}
	for _, tt := range tests {
		t.Run(tt.format+" "+tt.d.String(), func(t *testing.T) {
			var buf bytes.Buffer
			newLogger(config{LogFormat: tt.format, LogLevel: "info"}, &buf).Info("request", slog.Duration("duration", tt.d))
			if got := buf.String(); !strings.Contains(got, tt.want) {
				t.Errorf("log line %q, want %s", got, tt.want)
			}
		})
	}
}

// TestNotifyContextCause sends the process a signal: the context ends with
// a cause that names it.
func TestNotifyContextCause(t *testing.T) {
	ctx, stop := notifyContext(syscall.SIGUSR1)
	defer stop()
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("context not cancelled 10s after the signal")
	}
	var sc *signalCause
	if !errors.As(context.Cause(ctx), &sc) || sc.sig != syscall.SIGUSR1 {
		t.Errorf("cause = %v, want the SIGUSR1 signal cause", context.Cause(ctx))
	}
}
