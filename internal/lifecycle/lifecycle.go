// Package lifecycle runs a service's listeners and background work, and
// stops them in the one shutdown order of ARCHITECTURE.md ("Shutdown";
// docs/decisions/0020-shutdown-order.md): readiness off; the delay, still
// serving; stop accepting and drain the API; stop the background work,
// which runs under a context of its own (Background), not the signal's;
// drain the admin listener. What comes after (the audit ledger flushed,
// the store closed, the log written out) is the caller's, once Run
// returns. The log of a long-running command goes through a buffer made
// here (NewLog), written out at once from WARN up, on a timer, before a
// panic ends the process, and when the command returns.
package lifecycle

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/crash"
)

// Lifecycle holds the background context of one run.
type Lifecycle struct {
	bg             context.Context
	stopBackground context.CancelCauseFunc
}

// New returns a lifecycle whose background context is not cancelled with
// ctx, only by Run once the API has drained (or by Stop).
func New(ctx context.Context) *Lifecycle {
	bg, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	return &Lifecycle{bg: bg, stopBackground: stop}
}

// Background is the context of the background work (the projector,
// snapshots, rebuilds, admin actions): the requests of the shutdown delay
// are answered from a model still being fed, and nothing a request reads
// is closed under it.
func (l *Lifecycle) Background() context.Context { return l.bg }

// Stop cancels the background context (Run does it in its order; Stop is
// for a caller that returns before Run, and is harmless after it).
func (l *Lifecycle) Stop() { l.stopBackground(nil) }

// Config is what Run serves and stops.
type Config struct {
	// API and Admin are the servers of the two listeners, served on APILn
	// and AdminLn (see NewHTTPServer).
	API, Admin     *http.Server
	APILn, AdminLn net.Listener
	// Background tasks run under the background context; an error of one
	// stops the whole run.
	Background []func(ctx context.Context) error
	// Ready is turned not ready (Draining) as the first shutdown step; its
	// Source is awaited to announce readiness.
	Ready *admin.Readiness
	// OnReady, if set, is called once the read model has caught up, with
	// the bound addresses of the API and admin listeners.
	OnReady func(apiAddr, adminAddr string)
	// Delay is how long the API keeps serving once not ready (after a
	// signal only); Timeout bounds the drain of each listener.
	Delay, Timeout time.Duration
	// After are the last steps of the shutdown, run in order once the
	// admin listener is drained (the audit ledger flushed while NATS is
	// there, NATS closed, the API's handlers awaited): what the command
	// opened that still holds work in flight. Each runs whatever the
	// previous ones answered.
	After  []Closer
	Logger *slog.Logger
}

// Run serves cfg until ctx is done or a task fails, then stops everything
// in the shutdown order. It returns the first error of a task or of the
// API's drain.
func (l *Lifecycle) Run(ctx context.Context, cfg Config) error {
	logger := cfg.Logger
	g, gctx := errgroup.WithContext(ctx)
	for _, task := range cfg.Background {
		g.Go(func() error { defer crash.Guard(); return task(l.bg) })
	}
	g.Go(func() error { defer crash.Guard(); return serveHTTP(cfg.API, cfg.APILn, "api", logger) })
	g.Go(func() error { defer crash.Guard(); return serveHTTP(cfg.Admin, cfg.AdminLn, "admin", logger) })
	g.Go(func() error {
		defer crash.Guard()
		announceReady(gctx, cfg.Ready.Source, cfg.APILn.Addr().String(), cfg.AdminLn.Addr().String(), cfg.OnReady, logger)
		return nil
	})
	g.Go(func() error {
		defer crash.Guard()
		<-gctx.Done()
		return l.shutDown(ctx, gctx, cfg)
	})
	err := g.Wait()
	for _, c := range cfg.After {
		c.run(logger)
	}
	return err
}

// shutDown runs the shutdown order, once gctx is done (a signal, or a
// component that failed): readiness off, the delay (still serving; only
// for a signal, parent done), stop accepting and drain the API's requests,
// then stop the background work (the projector, snapshots, rebuilds), then
// drain the admin listener.
func (l *Lifecycle) shutDown(parent, gctx context.Context, cfg Config) error {
	cfg.Ready.Draining.Store(true)
	cfg.Logger.Info("shutting down", append(Cause(gctx), "drain_timeout", cfg.Timeout.String())...)
	delayShutdown(parent, cfg.API, cfg.Delay, cfg.Logger)
	err := drainServer(cfg.API, cfg.Timeout)
	l.stopBackground(context.Cause(gctx))
	drainAdmin(cfg.Admin, cfg.Timeout)
	return err
}

// announceReady logs, and tells onReady (if any), once the read model has
// caught up, unless ctx is done first.
func announceReady(ctx context.Context, proj admin.ReadinessSource, apiAddr, adminAddr string, onReady func(apiAddr, adminAddr string), logger *slog.Logger) {
	select {
	case <-proj.CaughtUp():
		p := proj.Progress()
		logger.Info("read model caught up; ready", "applied_sequence", p.AppliedSeq, "target_sequence", p.TargetSeq)
		if onReady != nil {
			onReady(apiAddr, adminAddr)
		}
	case <-ctx.Done():
	}
}
