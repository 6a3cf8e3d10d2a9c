package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// delayShutdown keeps api serving for delay after /readyz has turned 503,
// so that load balancers and Kubernetes endpoints stop sending new
// connections here before the listener closes: a rolling update then fails
// no request. Keep-alives are turned off meanwhile, so that clients holding
// a connection open a new one (to another replica) after their next answer.
//
// It waits only when parent was cancelled (a signal, or the caller's
// cancel), not when a component failed: a broken replica stops at once.
func delayShutdown(parent context.Context, api *http.Server, delay time.Duration, logger *slog.Logger) {
	if delay <= 0 || parent.Err() == nil {
		return
	}
	api.SetKeepAlivesEnabled(false)
	logger.Info("not ready; still serving during the shutdown delay", "shutdown_delay", delay.String())
	t := time.NewTimer(delay)
	defer t.Stop()
	<-t.C
}

// drainServer stops the API server accepting, letting requests in flight
// finish within timeout; it returns an error if some were still running
// then.
func drainServer(apiSrv *http.Server, timeout time.Duration) error {
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := apiSrv.Shutdown(sctx); err != nil {
		apiSrv.Close()
		return fmt.Errorf("API: requests still in flight after %v: %w", timeout, err)
	}
	return nil
}

// drainAdmin shuts the admin listener down within timeout; what is still
// running then is cut short without an error (an admin action holds the
// background context, already cancelled, and ends promptly).
func drainAdmin(adminSrv *http.Server, timeout time.Duration) {
	sctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := adminSrv.Shutdown(sctx); err != nil {
		adminSrv.Close()
	}
}
