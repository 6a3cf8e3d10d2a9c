package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"time"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/apiserver"
	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/redact"
	"github.com/lookup/persons/internal/tracing"

	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/certreload"
	"github.com/lookup/persons/internal/dlq"
	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/projector"
)

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(settings.Serve, "serve", `
Runs the projector and the query API over one read model, plus the admin
listener (/livez, /readyz, /metrics). The projector applies the events of
the stream to the read model in --data-dir, resuming from its checkpoint;
the API answers from the same read model. /readyz turns 200 once the read
model has caught up with the stream as it stood at start-up.

SIGTERM or SIGINT turns /readyz 503 at once and keeps serving for
--shutdown-delay (while load balancers take the replica out), then stops
accepting requests, drains those in flight within
--shutdown-timeout, lets the projector finish its batch and closes the read
model. While NATS is unreachable the service retries with backoff and does
not exit: it stays not ready until it has caught up once, and a replica that
is ready stays ready, serving its read model. It refuses to start without a JWKS, when the
stream does not exist, and when the read model belongs to another stream
or to an earlier incarnation of it (rebuild it into a new --data-dir with
"lookupd project --until-caught-up", or set --rebuild-on-mismatch).

With --snapshot-bucket, an empty data directory is first restored from the
newest snapshot of the stream, and snapshots are written every
--snapshot-interval and on POST /snapshot (admin listener, admin token);
POST /rebuild builds a fresh read model beside the live one and swaps it in
once caught up (docs/operations.md).`, getenv)
	if err != nil {
		return err
	}
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	logger, flushLogs := lifecycle.NewLog(stderr, c.Config.Logger)
	defer flushLogs()
	if err := c.Config.CheckTokenRules(logger); err != nil {
		return err
	}
	tr, err := tracing.New(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer tr.Flush(logger)
	return serve(ctx, c.Config, logger, serveOptions{tracing: tr})
}

// serveOptions are what "lookupd dev" (and a test) changes in the serve
// stack.
type serveOptions struct {
	// keys, when set, verifies tokens instead of cfg's JWKS.
	keys *auth.JWKS
	// adminExtra are extra handlers of the admin listener, by path.
	adminExtra map[string]http.Handler
	// onReady is called once, when the read model has caught up, with the
	// bound addresses of the API and admin listeners.
	onReady func(apiAddr, adminAddr string)
	// adminActions are the state-changing endpoints of the admin listener,
	// by ServeMux pattern ("POST /rebuild"), served only with the token of
	// LOOKUP_ADMIN_TOKEN_FILE (see admin.WithActions).
	adminActions map[string]http.Handler
	// tracing, when enabled, records a span per request and per applied
	// batch (OTEL_* variables; see package tracing).
	tracing *tracing.Tracing
	// wrapAPI, when set, wraps the API handler (a test holds requests in
	// flight across a shutdown with it).
	wrapAPI func(http.Handler) http.Handler
	// jwksOptions are added to the options of a JWKS URL (a test
	// refreshes it often with them).
	jwksOptions []auth.JWKSOption
}

// loadKeys returns the keys of cfg's JWKS file or URL (auth.OpenJWKS),
// after refusing a configuration that names none or both. A JWKS URL is
// refreshed in the background until ctx is done.
func loadKeys(ctx context.Context, cfg settings.Config, logger *slog.Logger, extra ...auth.JWKSOption) (*auth.JWKS, error) {
	if err := cfg.CheckJWKS(); err != nil {
		return nil, err
	}
	keyfile.WarnLoose(logger, keyfile.Trust("LOOKUP_JWKS_FILE", cfg.JWKSFile))
	opts := append([]auth.JWKSOption{auth.WithJWKSLogger(logger.With("component", "jwks")),
		auth.WithJWKSAllowHTTP(cfg.JWKSAllowHTTP)}, extra...)
	keys, err := auth.OpenJWKS(ctx, cfg.JWKSFile, cfg.JWKSURL, opts...)
	if errors.Is(err, auth.ErrJWKSInsecureURL) {
		return nil, fmt.Errorf("%w (set LOOKUP_JWKS_ALLOW_HTTP=true to allow it)", err)
	}
	return keys, err
}

// serve runs the projector, the API and the admin listener until ctx is
// done or one of them fails, then shuts all of them down (see cmdServe).
func serve(ctx context.Context, cfg settings.Config, logger *slog.Logger, opts serveOptions) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the JWKS refresh, if any
	logServeStart(cfg, logger)
	keys, adminGuard, err := loadGuards(ctx, cfg, opts, logger)
	if err != nil {
		return err
	}
	apiLn, adminLn, err := listen(cfg, logger)
	if err != nil {
		return err
	}
	defer apiLn.Close()
	defer adminLn.Close()

	var health natsconn.Health
	nc, js, err := connectJetStream(cfg, logger, &health)
	if err != nil {
		return err
	}
	defer nc.Close()
	visible := admin.NewVisibleHistogram()
	reg := admin.NewRegistry()
	rep, err := openReplica(cfg, js, reg, logger, projector.Config{ObserveVisible: admin.ObserveSeconds(visible),
		Tracer: opts.tracing.Tracer("github.com/lookup/persons/projector")})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeReplica(rep, logger)) }()
	ready := &admin.Readiness{Source: rep, Stale: admin.NewStaleness(rep, cfg.MaxStaleness, time.Now), Refused: health.Refused}
	reg.MustRegister(admin.NewProjectorCollector(rep, time.Now), visible, ready.Gauge(), keys.FailuresCounter())
	ledger, err := newLedger(cfg, nc, rep, reg, logger)
	if err != nil {
		return err
	}
	defer closeLedger(ledger, logger)
	eraser, err := erasure.New(erasure.Config{JS: js, Stream: cfg.Stream, DLQStream: dlq.DefaultStream, Bucket: cfg.ErasureBucket,
		Snapshots: rep.Snapshots(), Model: rep, Replica: cfg.ReplicaName(""), Delay: cfg.ErasureDelay, Registerer: reg, Logger: logger})
	if err != nil {
		return err
	}
	api, err := apiserver.New(apiserver.Config{Replica: rep, Keys: keys,
		Issuer: cfg.Issuer, Audience: cfg.Audience, TenantClaim: cfg.TenantClaim, TokenCacheSize: cfg.TokenCacheSize,
		Clients: cfg.AllowedClients, ScopeClaims: cfg.ScopeClaims,
		Ledger: ledger, RequirePurpose: cfg.RequirePurpose,
		MaxPositionWait: cfg.MaxPositionWait, Stale: ready.Stale, Registerer: reg, Logger: logger})
	if err != nil {
		return err
	}
	var inflight lifecycle.Inflight
	apiHandler := inflight.Count(opts.tracing.Handler(api, "lookupd api", api.Route))
	if opts.wrapAPI != nil {
		apiHandler = opts.wrapAPI(apiHandler)
	}
	lc := lifecycle.New(ctx)
	defer lc.Stop()
	actions := admin.ReplicaActions(lc.Background(), rep, cfg.SnapshotBucket, logger)
	maps.Copy(actions, opts.adminActions)
	err = lc.Run(ctx, lifecycle.Config{
		API:   lifecycle.NewHTTPServer(apiHandler, logger),
		Admin: lifecycle.NewHTTPServer(admin.WithActions(admin.Handler(ready, reg, opts.adminExtra, cfg.PProf), adminGuard, actions), logger),
		APILn: apiLn, AdminLn: adminLn,
		Background: []func(context.Context) error{
			func(bg context.Context) error { return lifecycle.RunProjector(bg, rep, logger) },
			func(bg context.Context) error { rep.SnapshotEvery(bg, cfg.SnapshotInterval, logger); return nil },
			func(bg context.Context) error { _ = eraser.Run(bg); return nil },
			func(bg context.Context) error { eraser.CompactEvery(bg, rep); return nil },
		},
		Ready: ready, OnReady: opts.onReady,
		Delay: cfg.ShutdownDelay, Timeout: cfg.ShutdownTimeout, Logger: logger,
		// The audit ledger's batches in flight are acknowledged or failed
		// (their answers are never sent); its last records need the
		// connection.
		After: []lifecycle.Closer{ledgerCloser(ledger), natsCloser(nc), inflight.Closer(settings.InflightLimit, logger)},
	})
	if err == nil {
		logger.Info("stopped")
	}
	return err // then the deferred: the store closed, the log written out
}

// listen opens the API and admin listeners of cfg, each HTTPS when its
// TLS settings say so (certreload.Listeners), after refusing TLS settings
// that do not go together.
func listen(cfg settings.Config, logger *slog.Logger) (api, admin net.Listener, err error) {
	if err := cfg.CheckTLS(); err != nil {
		return nil, nil, err
	}
	keyfile.WarnLoose(logger, keyfile.Secret("LOOKUP_TLS_KEY_FILE", cfg.TLSKeyFile))
	return certreload.Listeners{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, ClientCAFile: cfg.TLSClientCAFile,
		Admin: cfg.AdminTLS, Logger: logger.With("component", "tls")}.Listen(cfg.HTTPAddr, cfg.AdminAddr)
}

// loadGuards returns the keys that verify tokens (opts.keys, else loaded
// from cfg) and the guard of the admin actions.
func loadGuards(ctx context.Context, cfg settings.Config, opts serveOptions, logger *slog.Logger) (*auth.JWKS, *admin.TokenGuard, error) {
	keys := opts.keys
	if keys == nil {
		var err error
		if keys, err = loadKeys(ctx, cfg, logger, opts.jwksOptions...); err != nil {
			return nil, nil, err
		}
	}
	guard, err := admin.LoadTokenGuard(cfg.AdminTokenFile, logger.With("component", "admin"))
	if err != nil {
		return nil, nil, err
	}
	return keys, guard, nil
}

// logServeStart logs the settings serve starts with (no secret: URLs
// redacted, key files named, not read).
func logServeStart(cfg settings.Config, logger *slog.Logger) {
	logger.Info("starting lookupd serve", "version", version, "http_addr", cfg.HTTPAddr, "admin_addr", cfg.AdminAddr,
		"nats_url", redact.URLs(cfg.NATSURL), "stream", cfg.Stream, "data_dir", cfg.DataDir,
		"encrypted", cfg.EncryptionKeyFile != "", "jwks_url", redact.URLs(cfg.JWKSURL), "jwks_file", cfg.JWKSFile,
		"issuer", cfg.Issuer, "audience", cfg.Audience, "allowed_clients", cfg.AllowedClients, "scope_claims", cfg.ScopeClaims,
		"tenant_claim", cfg.TenantClaim)
}
