package main

import (
	"log/slog"
	"net/http"

	"github.com/lookup/persons/internal/admintoken"
)

// loadAdminGuard returns the guard of the state-changing admin endpoints:
// the token in cfg.AdminTokenFile, or, when unset, a guard that keeps them
// off (403).
func loadAdminGuard(cfg config, logger *slog.Logger) (*admintoken.Guard, error) {
	if cfg.AdminTokenFile == "" {
		return admintoken.Off(), nil
	}
	return admintoken.Load(cfg.AdminTokenFile, logger.With("component", "admin"))
}

// withAdminActions returns the admin listener's handler: open (probes,
// metrics, read-only extras) for every route but the state-changing
// actions, which are served behind guard. actions are keyed by ServeMux
// pattern with a method ("POST /rebuild"); every state-changing admin
// endpoint must be registered here, never in open.
func withAdminActions(open http.Handler, guard *admintoken.Guard, actions map[string]http.Handler) http.Handler {
	if len(actions) == 0 {
		return open
	}
	mux := http.NewServeMux()
	mux.Handle("/", open)
	for pattern, h := range actions {
		mux.Handle(pattern, guard.Require(h))
	}
	return mux
}
