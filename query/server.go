// Package query is the HTTP API of the Person and Authorized Signer Lookup
// service: Get Person and Get Authorized Signers behind bearer-JWT
// authentication, answered from a read model it reaches through the small
// Reader interface (it never imports the projector).
//
// Who imports it: cmd/lookupd, which gives it a Reader (internal/replica),
// a Positioner and an Auditor (internal/ledger); and a Go program that
// serves the same API over a read model of its own.
//
// The API is described by openapi.yaml (embedded, served at
// GET /openapi.yaml). Every non-2xx answer is an RFC 9457 problem.
//
// Checks run in this order (docs/api.md: authentication, scope,
// parameters, then the wait, then the resource): routing (404 unknown path, 405 other
// method), the token (401), scope read:persons, presence of the tenancy
// claim and, for ssn_mode=FULL, scope read:persons:ssn (403), then the
// parameters: X-Request-Id (400), Accept (406), query and path parameters
// and Lookup-Min-Position (400); then readiness (503 until the read model
// has caught up), staleness (503 stale) and the wait for
// Lookup-Min-Position (503 position-not-reached; freshness.go), and
// finally the resource (404, or 403 for another tenant's).
//
// Where things are: routes.go declares every route and middleware;
// observe.go, accesslog.go and metrics.go wrap each request; tokens.go
// asks the TokenVerifier it is given (internal/auth's, which holds the
// keys and checks the tokens) and checks scope and tenancy;
// requestid.go, accept.go and params.go check the
// rest of the request; handlers.go answers the operations, resources.go
// and problem.go write the answers (by hand, as encoding/json would).
package query

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/lookup/persons/events"
	"github.com/prometheus/client_golang/prometheus"
)

// Reader is what the API needs of the read model.
type Reader interface {
	// Person returns the consumer or business contact with id (lower-case
	// canonical UUID). Returns events.ErrNotFound if there is none.
	Person(ctx context.Context, id string) (events.Person, error)
	// Signers returns the consumer and its signers (in no particular order:
	// the API sorts them by last_name, first_name, signer id). Returns
	// events.ErrNotFound only if the consumer is unknown or deleted; a
	// consumer without signers is returned with an empty slice and a nil
	// error (the API checks tenancy on the consumer, then answers 404).
	Signers(ctx context.Context, consumerID string) (events.Person, []events.Signer, error)
}

// Config configures a Server.
type Config struct {
	Reader Reader // required
	// Tokens judges the bearer token of every request (required;
	// internal/auth's Verifier, which also says whether tenancy is on).
	Tokens     TokenVerifier
	Logger     *slog.Logger          // access log; nil = discard
	Registerer prometheus.Registerer // HTTP metrics registered here; nil = none
	Now        func() time.Time      // nil = time.Now
	// Ready reports whether the read model has caught up and may answer;
	// while it returns false both operations answer 503 (after the
	// authentication, scope and parameter checks). nil = always ready.
	Ready func() bool
	// Auditor records every answer that discloses protected data before
	// it is sent (see Auditor); nil = none recorded. RequirePurpose makes
	// the Lookup-Purpose header required on requests for protected data.
	Auditor        Auditor
	RequirePurpose bool
	// Position, when set, is the read model's applied position: every
	// answer of the operations carries it as Lookup-Position, and a
	// request's Lookup-Min-Position waits for it (at most MaxPositionWait,
	// 0 = DefaultMaxPositionWait, or less with Prefer: wait=<seconds>),
	// after the parameter checks, before the resource.
	Position        Positioner
	MaxPositionWait time.Duration
	// Stale, when set, reports whether the read model is beyond its
	// staleness bound; while it returns true both operations answer 503
	// stale (after readiness).
	Stale func() bool
}

// Errors of NewServer.
var (
	ErrNoReader = errors.New("query: Config.Reader is required")
	ErrNoTokens = errors.New("query: Config.Tokens is required")
)

// Server is the HTTP API. It is an http.Handler, safe for concurrent use.
type Server struct {
	reader  Reader
	fresh   *freshness
	tokens  TokenVerifier
	log     *slog.Logger
	metrics *httpMetrics
	router  chi.Router
	audit   auditing
}

var _ http.Handler = (*Server)(nil)

// NewServer returns the HTTP API configured by cfg. It returns ErrNoReader
// or ErrNoTokens if cfg lacks a Reader or Tokens, and an error if the metrics
// cannot be registered with cfg.Registerer.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Reader == nil {
		return nil, ErrNoReader
	}
	if cfg.Tokens == nil {
		return nil, ErrNoTokens
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m, err := newHTTPMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	fresh, err := newFreshness(cfg)
	if err != nil {
		return nil, err
	}
	s := &Server{
		reader:  cfg.Reader,
		fresh:   fresh,
		tokens:  cfg.Tokens,
		log:     log,
		metrics: m,
		audit:   auditing{auditor: cfg.Auditor, requirePurpose: cfg.RequirePurpose},
	}
	s.router = s.routes(s.authenticate)
	return s, nil
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.router.ServeHTTP(w, r)
}
