// Package apiserver builds the lookup API as every program serves it: the
// HTTP API (query.Server) over a replica's read model, its token verifier
// (internal/auth) and its audit ledger (internal/ledger). lookupd serve and
// the test server lookuptest both build theirs here, so that the test
// double cannot drift from the server: the same checks, the same ledger,
// the same readiness and positions.
//
// Files: apiserver.go (Config, New, NewLedger).
package apiserver

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/query"
)

// The ledger is the API's auditor.
var _ query.Auditor = (*ledger.Ledger)(nil)

// Config is what the API is built from.
type Config struct {
	Replica *replica.Replica // the read model: required
	Keys    *auth.JWKS       // the keys that sign tokens: required
	// The token's checks (LOOKUP_ISSUER, LOOKUP_AUDIENCE,
	// LOOKUP_TENANT_CLAIM) and the verified tokens' cache (0: its default).
	Issuer, Audience, TenantClaim string
	// Clients and ScopeClaims: the identity provider's dialect (see
	// auth.Config).
	Clients, ScopeClaims []string
	TokenCacheSize       int
	// Ledger records the disclosures (NewLedger; required: its mode may be
	// off). RequirePurpose makes Lookup-Purpose required with protected
	// data.
	Ledger         *ledger.Ledger
	RequirePurpose bool
	// MaxPositionWait bounds a Lookup-Min-Position wait (0: the API's
	// default); Stale says whether the model is past its staleness bound
	// (nil: no bound; admin.NewStaleness).
	MaxPositionWait time.Duration
	Stale           func() bool
	Registerer      prometheus.Registerer // nil: no metrics
	Logger          *slog.Logger          // nil: discarded
}

// New returns the API over cfg.Replica. Until the read model has caught
// up, the API answers 503 rather than a false 404; once caught up it stays
// ready, as /readyz does.
func New(cfg Config) (*query.Server, error) {
	if cfg.Ledger == nil {
		return nil, fmt.Errorf("API: no audit ledger (its mode may be off, not its value nil)")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	tokens, err := auth.NewVerifier(auth.Config{Keys: cfg.Keys, Issuer: cfg.Issuer, Audience: cfg.Audience,
		TenantClaim: cfg.TenantClaim, Clients: cfg.Clients, ScopeClaims: cfg.ScopeClaims,
		TokenCacheSize: cfg.TokenCacheSize, Registerer: cfg.Registerer})
	if err != nil {
		return nil, fmt.Errorf("API: %w", err)
	}
	rep := cfg.Replica
	api, err := query.NewServer(query.Config{
		Reader:         rep,
		Tokens:         tokens,
		Logger:         logger.With("component", "api"),
		Registerer:     cfg.Registerer,
		Ready:          func() bool { return admin.CaughtUp(rep) },
		Auditor:        cfg.Ledger,
		RequirePurpose: cfg.RequirePurpose,
		// Lookup-Position, Lookup-Min-Position, staleness: docs/consistency.md.
		Position: rep, MaxPositionWait: cfg.MaxPositionWait, Stale: cfg.Stale,
	})
	if err != nil {
		return nil, fmt.Errorf("API: %w", err)
	}
	return api, nil
}

// LedgerConfig is what a replica's audit ledger is built from.
type LedgerConfig struct {
	Mode    ledger.Mode // LOOKUP_AUDIT
	Stream  string      // LOOKUP_AUDIT_STREAM; "" = ledger.DefaultStream
	Replica string      // the replica's name, its chain's subject
	// Position is the read model's applied position, recorded with each
	// record (a replica's Applied; the accounting service's follower's).
	Position   func() uint64
	Registerer prometheus.Registerer
	Logger     *slog.Logger
}

// NewLedger returns the audit ledger of a replica, publishing through nc.
// With Mode off it records nothing and needs no connection.
func NewLedger(nc *nats.Conn, cfg LedgerConfig) (*ledger.Ledger, error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	l, err := ledger.New(nc, ledger.Config{
		Mode:       cfg.Mode,
		Stream:     cfg.Stream,
		Replica:    cfg.Replica,
		Position:   cfg.Position,
		Logger:     logger.With("component", "audit"),
		Registerer: cfg.Registerer,
	})
	if err != nil {
		return nil, fmt.Errorf("audit ledger: %w", err)
	}
	return l, nil
}
