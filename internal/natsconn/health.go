package natsconn

import "sync/atomic"

// Health records whether the NATS server refuses the credentials after
// the connection was made (a revoked user, an expired credential): a
// replica is then not ready until the server accepts them again.
type Health struct{ refused atomic.Bool }

// Refused reports whether the server refuses the credentials now.
func (h *Health) Refused() bool { return h.refused.Load() }

// Follow sets cfg's OnRefused and OnAccepted to record into h.
func (h *Health) Follow(cfg *Config) {
	cfg.OnRefused = func(error) { h.refused.Store(true) }
	cfg.OnAccepted = func() { h.refused.Store(false) }
}
