package lifecycle

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// caughtUp is a admin.Source that has caught up.
type caughtUp struct{}

func (caughtUp) Progress() projector.Progress { return projector.Progress{} }
func (caughtUp) CaughtUp() <-chan struct{}    { c := make(chan struct{}); close(c); return c }

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// TestRunShutdownOrder holds the order of ARCHITECTURE.md "Shutdown": once
// the parent is cancelled, readiness is off at once, a request in flight
// is still answered, and the background work stops only after the API has
// drained.
func TestRunShutdownOrder(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	lc := New(ctx)
	defer lc.Stop()
	ready := &admin.Readiness{Source: caughtUp{}}
	entered := make(chan struct{})
	var bgEndedInFlight, answered atomic.Bool
	// The request in flight waits for readiness to turn off, then watches
	// the background context for a second: it must not end under it.
	api := NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		for ready.Ready() {
			time.Sleep(time.Millisecond)
		}
		select {
		case <-lc.Background().Done():
			bgEndedInFlight.Store(true)
		case <-time.After(time.Second):
		}
		answered.Store(true)
	}), logger)
	apiLn, adminLn := listen(t), listen(t)
	var readyAddrs atomic.Value
	done := make(chan error, 1)
	go func() {
		done <- lc.Run(ctx, Config{
			API: api, Admin: NewHTTPServer(http.NotFoundHandler(), logger), APILn: apiLn, AdminLn: adminLn,
			Background: []func(context.Context) error{func(bg context.Context) error { <-bg.Done(); return nil }},
			Ready:      ready,
			OnReady:    func(a, b string) { readyAddrs.Store(a + " " + b) },
			Delay:      50 * time.Millisecond, Timeout: 10 * time.Second, Logger: logger,
		})
	}()
	testkit.WaitFor(t, 10*time.Second, func() error {
		if readyAddrs.Load() == nil {
			return errors.New("OnReady not called")
		}
		return nil
	})
	go func() {
		resp, err := http.Get("http://" + apiLn.Addr().String() + "/")
		if err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run = %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s")
	}
	if bgEndedInFlight.Load() {
		t.Error("the background context ended while a request was in flight")
	}
	if !answered.Load() {
		t.Error("the request in flight was not answered")
	}
	if lc.Background().Err() == nil {
		t.Error("the background context is still alive after Run")
	}
}

// TestRunStopsWhenATaskFails: a failing background task ends Run with its
// error, without waiting for the delay.
func TestRunStopsWhenATaskFails(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	boom := errors.New("boom")
	ctx := t.Context()
	lc := New(ctx)
	defer lc.Stop()
	start := time.Now()
	err := lc.Run(ctx, Config{
		API: NewHTTPServer(http.NotFoundHandler(), logger), Admin: NewHTTPServer(http.NotFoundHandler(), logger),
		APILn: listen(t), AdminLn: listen(t),
		Background: []func(context.Context) error{func(context.Context) error { return boom }},
		Ready:      &admin.Readiness{Source: caughtUp{}},
		Delay:      time.Hour, Timeout: 10 * time.Second, Logger: logger,
	})
	if !errors.Is(err, boom) {
		t.Errorf("Run = %v, want %v", err, boom)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("Run took %v: the delay applied to a failure", d)
	}
}

// TestRunClosesAfter: once the listeners are drained and the background
// work stopped, Run runs the closers of After in order, each with its
// limit, whatever the previous ones answered, and logs their errors.
func TestRunClosesAfter(t *testing.T) {
	logger, logs := testkit.JSONLogger()
	ctx := t.Context()
	lc := New(ctx)
	defer lc.Stop()
	var order []string
	stopped := false
	closer := func(name string, limit time.Duration, err error) Closer {
		return Closer{Name: name, Limit: limit, Close: func(ctx context.Context) error {
			if !stopped {
				t.Errorf("%s ran before the background work stopped", name)
			}
			if _, ok := ctx.Deadline(); ok != (limit > 0) {
				t.Errorf("%s: deadline %v, want one only with a limit", name, ok)
			}
			order = append(order, name)
			return err
		}}
	}
	err := lc.Run(ctx, Config{
		API: NewHTTPServer(http.NotFoundHandler(), logger), Admin: NewHTTPServer(http.NotFoundHandler(), logger),
		APILn: listen(t), AdminLn: listen(t),
		Background: []func(context.Context) error{func(bg context.Context) error {
			defer func() { stopped = true }()
			return errors.New("stop")
		}},
		Ready: &admin.Readiness{Source: caughtUp{}},
		Delay: time.Hour, Timeout: 10 * time.Second, Logger: logger,
		After: []Closer{closer("ledger", time.Second, errors.New("flush failed")), closer("nats", 0, nil)},
	})
	if err == nil {
		t.Fatal("Run = nil, want the task's error")
	}
	if got := strings.Join(order, ","); got != "ledger,nats" {
		t.Errorf("closers ran as %q, want ledger,nats", got)
	}
	if !strings.Contains(logs.String(), `"msg":"ledger","err":"flush failed"`) {
		t.Errorf("log %s lacks the closer's error", logs)
	}
}
