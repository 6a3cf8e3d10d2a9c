package main

import (
	"context"
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
