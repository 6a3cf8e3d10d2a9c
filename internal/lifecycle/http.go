package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/lookup/persons/internal/crash"
)

// NewHTTPServer returns a server for h. OPTIONS * reaches h (net/http's
// built-in answer would lack the headers of every answer).
func NewHTTPServer(h http.Handler, logger *slog.Logger) *http.Server {
	return &http.Server{
		Handler:                      h,
		DisableGeneralOptionsHandler: true,
		ReadHeaderTimeout:            10 * time.Second,
		ReadTimeout:                  30 * time.Second,
		WriteTimeout:                 30 * time.Second,
		IdleTimeout:                  120 * time.Second,
		MaxHeaderBytes:               64 << 10,
		ErrorLog:                     slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// serveHTTP serves srv on ln until srv is shut down.
func serveHTTP(srv *http.Server, ln net.Listener, name string, logger *slog.Logger) error {
	logger.Info("listening", "listener", name, "addr", ln.Addr().String())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("%s listener: %w", name, err)
	}
	return nil
}

// Inflight counts the API handlers running, so that the read model is
// closed only after the last of them, even one that outlived the drain
// timeout (http.Server.Close does not wait for handlers).
type Inflight struct{ wg sync.WaitGroup }

// Count returns h counting its running handlers in i.
func (i *Inflight) Count(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i.wg.Add(1)
		defer i.wg.Done()
		h.ServeHTTP(w, r)
	})
}

// Closer is the step of a shutdown (Config.After) that waits up to limit
// for the handlers still running.
func (i *Inflight) Closer(limit time.Duration, logger *slog.Logger) Closer {
	return Closer{Name: "API handlers", Close: func(context.Context) error { i.Wait(limit, logger); return nil }}
}

// Wait waits up to limit for the handlers still running.
func (i *Inflight) Wait(limit time.Duration, logger *slog.Logger) {
	done := make(chan struct{})
	go func() { defer crash.Guard(); i.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(limit):
		logger.Error("API handlers still running; closing the read model under them", "waited", limit.String())
	}
}
