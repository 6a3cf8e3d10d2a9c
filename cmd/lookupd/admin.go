package main

import (
	"log/slog"

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
