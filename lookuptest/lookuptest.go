// Package lookuptest runs the Person and Authorized Signer Lookup service
// inside a test process, for the unit tests of the services that call it:
// the real projector and the real API (the same code as lookupd serve)
// over an in-process NATS JetStream server and a temporary read model,
// with no data until the test publishes some, and a signing key made for
// the server alone.
//
//	srv := lookuptest.New(t)
//	seq, err := srv.Upsert(ctx, events.Consumer{...}) // version 1, validated, applied
//	c := srv.Client()                                 // a client.Client with a valid token
//	res, err := c.GetPerson(ctx, id, client.MinPosition(seq))
//
// What it offers, as Pub/Sub's pstest or miniredis do for theirs:
//   - Upsert and Delete build the events of the data they are given
//     (events.Consumer, events.Signer, ...) with events.NewEvent and each
//     entity's next version (Versions counts them: 1, 2, ..., a deletion
//     included), publish them and wait until they are applied;
//   - Publish and Seed go through events.Publisher, so an event the
//     contract refuses fails the test's call and publishes nothing;
//     they return the stream sequence, the position to read one's own
//     write with (client.MinPosition) or to wait for (WaitForPosition);
//   - Token mints tokens the server accepts and, on purpose, tokens it
//     refuses: expired, another audience or issuer, no scope, another
//     tenant, another key;
//   - PauseEvents and ResumeEvents stop and restart the projector, to see
//     position-not-reached and, with WithMaxStaleness, stale;
//   - SetError and FailNext make it answer the API's operations with a
//     failure of the service's (client.ErrNotReady,
//     client.ErrAuditUnavailable, client.ErrInternal, ...), with the
//     service's own problem body and headers, as miniredis's SetError
//     does, so that a test sees its code handle an outage; SetError("")
//     clears them;
//   - Requests lists the requests it answered (method, path, status,
//     request id, whether a failure was injected) with the records the
//     disclosure ledger holds of each, as pstest's Messages lists what it
//     was sent;
//   - options for tenancy, the staleness bound and the audit ledger.
//
// The container module (module github.com/lookup/persons/lookupdcontainer)
// offers the same methods for a test that runs the released image
// instead: both satisfy Lookupd.
package lookuptest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/apiserver"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/crash"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/projector"
)

// Lookupd is what a test needs of a running service, in process (Server)
// or in a container (lookupdcontainer.Container).
type Lookupd interface {
	// APIURL is the base URL of the HTTP API.
	APIURL() string
	// NATSURL is the URL of the NATS server whose stream the service reads.
	NATSURL() string
	// Publish publishes e through events.Publisher and returns its stream
	// sequence; it does not wait for the service to apply it.
	Publish(ctx context.Context, e events.Event) (uint64, error)
	// Seed publishes all of es, after checking every one against the
	// contract (none is published if one is invalid), waits until the
	// service has applied them and returns the last one's sequence.
	Seed(ctx context.Context, es ...events.Event) (uint64, error)
	// Upsert and Delete seed the upsert or the deletion of each of data
	// (events.Consumer, events.Signer, ...), at each entity's next
	// version (see Versions), and return the last one's sequence once the
	// service has applied it.
	Upsert(ctx context.Context, data ...any) (uint64, error)
	Delete(ctx context.Context, data ...any) (uint64, error)
	// WaitForPosition waits until the service has applied sequence seq.
	WaitForPosition(ctx context.Context, seq uint64) error
	// Token returns a token signed with the key the service trusts, shaped
	// by opts.
	Token(opts ...TokenOption) (string, error)
}

var _ Lookupd = (*Server)(nil)

// Server is the service running in the test's process. Its methods are
// safe for concurrent use.
type Server struct {
	cfg    config
	key    *Key
	policy TokenPolicy
	dir    string
	temp   bool // dir is removed by Close

	nats   *dev.NATSServer
	nc     *nats.Conn
	js     jetstream.JetStream
	pub    *events.Publisher
	rep    *replica.Replica
	ledger *ledger.Ledger
	http   *httptest.Server

	versions Versions // the entities' versions (Upsert, Delete)
	faults   faults   // SetError, FailNext, Requests

	mu   sync.Mutex
	proj *projector.Projector // the current model's projector (PauseEvents)
	demo []events.Event       // WithDemoData's events

	cancel  context.CancelFunc
	runDone chan struct{} // closed when the replica's Run has returned
	runErr  error         // Run's result, set before runDone is closed
	closed  sync.Once
	err     error
}

// New starts a Server for the test t and stops it when t ends
// (t.Cleanup). It fails t if the server cannot start.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s, err := start(t.Context(), t.TempDir(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Start starts a Server outside a test, for TestMain; ctx bounds the
// start. Close stops it and removes its files.
func Start(ctx context.Context, opts ...Option) (*Server, error) {
	dir, err := os.MkdirTemp("", "lookuptest-")
	if err != nil {
		return nil, fmt.Errorf("lookuptest: %w", err)
	}
	s, err := start(ctx, dir, opts)
	if err != nil {
		return nil, errors.Join(err, os.RemoveAll(dir))
	}
	s.temp = true
	return s, nil
}

// start starts a server in dir; on error, what it had started is stopped.
func start(ctx context.Context, dir string, opts []Option) (_ *Server, err error) {
	cfg := defaults()
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, fmt.Errorf("lookuptest: %w", err)
		}
	}
	s := &Server{cfg: cfg, dir: dir, runDone: make(chan struct{}),
		policy: TokenPolicy{Issuer: cfg.issuer, Audience: cfg.audience, TenantClaim: cfg.tenantClaim}}
	defer func() {
		if err != nil {
			err = errors.Join(fmt.Errorf("lookuptest: %w", err), s.stop())
		}
	}()
	if s.key, err = NewKey(); err != nil {
		return nil, err
	}
	if err := s.startNATS(ctx); err != nil {
		return nil, err
	}
	if err := s.startReplica(); err != nil {
		return nil, err
	}
	api, err := s.newAPI()
	if err != nil {
		return nil, err
	}
	s.http = httptest.NewServer(s.answer(api))
	select {
	case <-s.rep.CaughtUp():
	case <-s.runDone:
		return nil, fmt.Errorf("projector: %w", s.runErr)
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the read model: %w", ctx.Err())
	}
	return s, nil
}

// startNATS starts the in-process NATS server with the source stream (and
// the audit stream, unless WithAudit("off")).
func (s *Server) startNATS(ctx context.Context) (err error) {
	if s.nats, err = dev.StartNATS("lookuptest", filepath.Join(s.dir, "nats")); err != nil {
		return err
	}
	if s.nc, err = nats.Connect(s.nats.URL, nats.Name("lookuptest")); err != nil {
		return fmt.Errorf("connect to NATS: %w", err)
	}
	if s.js, err = jetstream.New(s.nc); err != nil {
		return err
	}
	if err := dev.EnsurePersonsStream(ctx, s.js, s.cfg.stream); err != nil {
		return err
	}
	s.pub = events.NewPublisher(s.js)
	if s.cfg.demo {
		data, err := dev.NewDemoData()
		if err != nil {
			return err
		}
		if _, err := dev.PublishAllDemo(ctx, s.pub, 0, data); err != nil {
			return fmt.Errorf("demo data: %w", err)
		}
		s.demo = data.Events
		for _, e := range s.demo {
			s.versions.Observe(e)
		}
	}
	return nil
}

// Demo returns the events WithDemoData published, in order (none
// without it).
func (s *Server) Demo() []events.Event { return append([]events.Event(nil), s.demo...) }

// startReplica opens the read model and runs its projector until Close.
func (s *Server) startReplica() (err error) {
	pcfg := projector.Config{Stream: s.cfg.stream, Logger: s.cfg.logger, RefreshInterval: s.cfg.refresh}
	s.rep, err = replica.Open(replica.Config{
		Root:  filepath.Join(s.dir, "store"),
		Store: projector.StoreOptions{MemoryBudget: projector.MinMemoryBudget, Logger: s.cfg.logger},
		NewProjector: func(st *projector.Store) *projector.Projector {
			p := projector.New(s.js, st, pcfg)
			s.mu.Lock()
			s.proj = p
			s.mu.Unlock()
			return p
		},
		Stream: func(ctx context.Context) (projector.StreamIdentity, error) {
			return projector.LookUpStream(ctx, s.js, s.cfg.stream)
		},
		Logger: s.cfg.logger,
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go func() {
		defer crash.Guard()
		s.runErr = s.rep.Run(ctx)
		close(s.runDone)
	}()
	return nil
}

// newAPI returns the API over the read model, as lookupd serve wires it.
func (s *Server) newAPI() (http.Handler, error) {
	keys, err := auth.ParseJWKS(s.key.JWKS())
	if err != nil {
		return nil, err
	}
	if s.ledger, err = apiserver.NewLedger(s.nc, apiserver.LedgerConfig{Mode: s.cfg.audit, Replica: "lookuptest",
		Position: s.rep.Applied, Logger: s.cfg.logger}); err != nil {
		return nil, err
	}
	return apiserver.New(apiserver.Config{Replica: s.rep, Keys: keys,
		Issuer: s.cfg.issuer, Audience: s.cfg.audience, TenantClaim: s.cfg.tenantClaim, TokenCacheSize: auth.DefaultTokenCacheSize,
		Ledger: s.ledger, MaxPositionWait: s.cfg.maxPositionWait,
		Stale: admin.NewStaleness(s.rep, s.cfg.maxStaleness, time.Now), Logger: s.cfg.logger})
}

// APIURL is the base URL of the API, http://127.0.0.1:port.
func (s *Server) APIURL() string { return s.http.URL }

// NATSURL is the URL of the in-process NATS server.
func (s *Server) NATSURL() string { return s.nats.URL }

// Client returns a client of the API with a token of Token() (scope
// read:persons, and on a server WithTenancy no tenant: reads are then 403
// forbidden), and opts after it. It panics on a token option of opts:
// for another token, use client.New with APIURL and Token.
func (s *Server) Client(opts ...client.Option) *client.Client {
	tok, err := s.Token()
	if err != nil {
		panic(err) // the default token always mints
	}
	c, err := client.New(s.APIURL(), append([]client.Option{client.WithToken(tok)}, opts...)...)
	if err != nil {
		panic(fmt.Sprintf("lookuptest: Client: %v", err))
	}
	return c
}

// Token returns a token the server accepts, unless opts say otherwise
// (Expired, Audience, Scopes(), SignedByAnotherKey...).
func (s *Server) Token(opts ...TokenOption) (string, error) { return s.key.Token(s.policy, opts...) }

// Publish publishes e through events.Publisher and returns its stream
// sequence. An event the contract refuses is an *events.InvalidEventError
// (errors.Is events.ErrInvalidEvent) and nothing is published.
func (s *Server) Publish(ctx context.Context, e events.Event) (uint64, error) {
	seq, err := s.pub.Publish(ctx, e)
	if err == nil {
		s.versions.Observe(e)
	}
	return seq, err
}

// Seed checks every one of es against the contract, then publishes them
// in order and waits until the read model has applied the last one, whose
// sequence it returns. If one is invalid, none is published.
func (s *Server) Seed(ctx context.Context, es ...events.Event) (uint64, error) {
	for i, e := range es {
		if _, err := events.NewMsg(e); err != nil {
			return 0, fmt.Errorf("lookuptest: seed: event %d of %d: %w (nothing published)", i+1, len(es), err)
		}
	}
	var last uint64
	for i, e := range es {
		seq, err := s.pub.Publish(ctx, e)
		if err != nil {
			return last, fmt.Errorf("lookuptest: seed: event %d of %d: %w", i+1, len(es), err)
		}
		s.versions.Observe(e)
		last = seq
	}
	return last, s.WaitForPosition(ctx, last)
}

// WaitForPosition waits until the read model has applied sequence seq,
// or ctx is done.
func (s *Server) WaitForPosition(ctx context.Context, seq uint64) error {
	if err := s.rep.Wait(ctx, seq); err != nil {
		return fmt.Errorf("lookuptest: position %d not applied (at %d): %w", seq, s.rep.Applied(), err)
	}
	return nil
}

// PauseEvents stops the projector applying events until ResumeEvents:
// what is published meanwhile is in the stream but not visible, so a
// read with client.MinPosition of its sequence answers 503
// position-not-reached, and, once the oldest of them is older than
// WithMaxStaleness, every read answers 503 stale.
func (s *Server) PauseEvents() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proj.Pause()
}

// ResumeEvents lets the projector apply what was published since
// PauseEvents, and what comes after. It does not wait for them: call
// WaitForPosition with the last sequence published.
func (s *Server) ResumeEvents() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.proj.Resume()
}

// Close stops the server and removes its files (those of Start; New's are
// in the test's temporary directory). It returns the projector's error, if
// it failed. Closing twice returns the first result.
func (s *Server) Close() error {
	s.closed.Do(func() {
		s.err = s.stop()
		if s.temp {
			s.err = errors.Join(s.err, os.RemoveAll(s.dir))
		}
	})
	return s.err
}

// stop stops what start started, in reverse order.
func (s *Server) stop() error {
	var errs []error
	if s.http != nil {
		s.http.Close()
	}
	if s.cancel != nil {
		s.cancel()
		<-s.runDone
		if s.runErr != nil {
			errs = append(errs, fmt.Errorf("projector: %w", s.runErr))
		}
	}
	if s.ledger != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, s.ledger.Close(ctx))
		cancel()
	}
	if s.rep != nil {
		errs = append(errs, s.rep.Close())
	}
	if s.nc != nil {
		s.nc.Close()
	}
	if s.nats != nil {
		s.nats.Close()
	}
	return errors.Join(errs...)
}
