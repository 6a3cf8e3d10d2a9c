package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/accounting/fhir"
	"github.com/lookup/persons/internal/accounting/officer"
	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/redact"
	"github.com/lookup/persons/internal/settings"
)

func cmdAuditServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(settings.AuditServe, "audit serve", `
Runs the accounting service: it projects the audit stream into an index of
its own (--accounting-dir: each record under its person and time, with the
stream position applied, resumed after a restart, rebuilt from the stream
when deleted) and answers a person's disclosures on the --http-addr
listener:

  GET /fhir/AuditEvent?entity=<person id>&date=ge<time>&date=le<time>&_count=<n>

a FHIR R4 searchset Bundle of AuditEvents, newest first, with a next link
(_format=jsonl: one record per line, the next page in a Link header), and
the privacy officer's page of a person's disclosures, in words, with its
CSV export:

  GET /officer/person?id=<person id>&from=YYYY-MM-DD&to=YYYY-MM-DD

which names recipients and purposes from the registries (--clients-file,
--purposes-file; --registries-strict refuses to run when the ledger holds
codes they lack). It
admits bearer tokens with the scope read:audit, verified as lookupd serve
verifies its own (--jwks-url or --jwks-file, --issuer, --audience), and
records every search in the audit ledger before it answers (on its own
chain, --replica-id). The admin listener serves /livez, /readyz (200 once
the index has caught up with the stream) and /metrics
(lookup_accounting_index_lag_events). Its memory budget (--memory-budget,
by default 3/4 of the container's memory limit) sizes the index's Badger
store and Go's soft memory limit, as for lookupd serve. Run it as a
process of its own, not beside every lookup replica (docs/audit.md).`, getenv)
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
	if err := c.Config.CheckRegistries(); err != nil {
		return err
	}
	c.Config.WarnLetterhead(logger)
	return auditServe(ctx, c.Config, logger)
}

// auditServe runs the accounting service until ctx is done or it fails,
// then shuts it down in serve's order.
func auditServe(ctx context.Context, cfg settings.Config, logger *slog.Logger) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the JWKS refresh, if any
	logger.Info("starting lookupd audit serve", "version", version, "http_addr", cfg.HTTPAddr, "admin_addr", cfg.AdminAddr,
		"nats_url", redact.URLs(cfg.NATSURL), "audit_stream", cfg.AuditStream, "accounting_dir", cfg.AccountingDir,
		"jwks_url", redact.URLs(cfg.JWKSURL), "jwks_file", cfg.JWKSFile, "issuer", cfg.Issuer, "audience", cfg.Audience)
	registry, err := accounting.LoadRegistry(cfg.ClientsFile, cfg.PurposesFile)
	if err != nil {
		return err
	}
	keys, err := loadKeys(ctx, cfg, logger)
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
	index, follower, building, err := openIndex(cfg, js, logger)
	if err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, lifecycle.CloseStore(lifecycle.StoreCloser{Close: index.Close, Dir: cfg.AccountingDir,
			Closed: "accounting index closed", Failed: "close accounting index " + cfg.AccountingDir}, logger))
	}()
	reg := admin.NewRegistry()
	ready := &admin.Readiness{Source: follower, Refused: health.Refused}
	reg.MustRegister(ready.Gauge(), keys.FailuresCounter())
	if err := follower.Register(reg); err != nil {
		return err
	}
	cfg.ReplicaID = cfg.ReplicaName("accounting-")
	ledger, err := newLedger(cfg, nc, follower, reg, logger)
	if err != nil {
		return err
	}
	defer closeLedger(ledger, logger)
	authn, err := auth.NewAuthenticator(auth.AuthenticatorConfig{Keys: keys, Issuer: cfg.Issuer, Audience: cfg.Audience,
		Clients: cfg.AllowedClients, ScopeClaims: cfg.ScopeClaims, Scope: accounting.Scope, TokenCacheSize: cfg.TokenCacheSize, Registerer: reg})
	if err != nil {
		return fmt.Errorf("accounting service: %w", err)
	}
	search, err := accountingAPI(cfg, index, registry, follower, accounting.LedgerRecorder(ledger), authn, reg, js, logger)
	if err != nil {
		return err
	}
	background := []func(context.Context) error{follower.Run}
	if cfg.RegistriesStrict {
		background = append(background, accounting.CheckRegistriesOnce(follower, index, registry, logger))
	}
	var inflight lifecycle.Inflight
	lc := lifecycle.New(ctx)
	defer lc.Stop()
	// Catching up with the stream (building the index anew, or after a
	// long stop) is a rebuild: Go's soft memory limit is lifted until the
	// index has caught up, as serve lifts it while it rebuilds (under the
	// limit, the collector took 45% of the CPU of a build of a million
	// records).
	onReady := func(string, string) {}
	if building != nil {
		building(true)
		onReady = func(string, string) { building(false) }
	}
	err = lc.Run(ctx, lifecycle.Config{
		API:   lifecycle.NewHTTPServer(inflight.Count(search), logger),
		Admin: lifecycle.NewHTTPServer(admin.Handler(ready, reg, nil, cfg.PProf), logger),
		APILn: apiLn, AdminLn: adminLn,
		Background: background,
		Ready:      ready, OnReady: onReady,
		Delay: cfg.ShutdownDelay, Timeout: cfg.ShutdownTimeout, Logger: logger,
		// The records of searches in flight, while NATS is there.
		After: []lifecycle.Closer{ledgerCloser(ledger), natsCloser(nc), inflight.Closer(settings.InflightLimit, logger)},
	})
	if err == nil {
		logger.Info("stopped")
	}
	return err // then the deferred: the index closed, the log written out
}

// openIndex opens the accounting index of cfg.AccountingDir, sized to the
// memory budget (applied to Go's soft memory limit), and its follower of
// the audit stream; building, nil without a budget, lifts the soft limit
// while the index catches up.
func openIndex(cfg settings.Config, js jetstream.JetStream, logger *slog.Logger) (*accounting.Index, *accounting.Follower, func(bool), error) {
	budget := settings.SizeBudget(cfg.MemoryBudget, settings.FromCgroup)
	building := settings.MemoryLimitLifter(settings.ApplyBudget(budget, logger))
	index, err := accounting.Open(cfg.AccountingDir, accounting.Options{MemoryBudget: budget.Bytes, Logger: logger})
	if err != nil {
		return nil, nil, nil, err
	}
	follower, err := accounting.NewFollower(index, js, cfg.AuditStream, logger.With("component", "accounting"))
	if err != nil {
		return nil, nil, nil, errors.Join(fmt.Errorf("accounting index %s: %w", cfg.AccountingDir, err), index.Close())
	}
	return index, follower, building, nil
}

// accountingAPI returns the accounting service's routes: the FHIR search
// behind authn (its refusals are the API's problem documents; every answer
// of it no-store and nosniff, fhir.Headers) and the officer's pages (the
// erasure's evidence read from js), which authorize with authn themselves
// and answer a refusal as a page; each records its answers with record.
func accountingAPI(cfg settings.Config, index *accounting.Index, registry *accounting.Registry, follower *accounting.Follower,
	record func(context.Context, accounting.Access) error, authn *auth.Authenticator, reg prometheus.Registerer, js jetstream.JetStream, logger *slog.Logger) (http.Handler, error) {
	pages, err := officer.New(officer.Config{Index: index, Registry: registry, Status: follower.Status, Logger: logger,
		PageSize: cfg.OfficerPageSize, Registerer: reg, Authorize: authn.Authorize, Record: record,
		Erasure: func(ctx context.Context, id string) (erasure.Report, error) {
			return erasure.Status(ctx, erasure.StatusConfig{JS: js, Bucket: cfg.ErasureBucket}, id)
		},
		Letterhead: officer.Letterhead{Name: cfg.CoveredEntityName, Address: cfg.CoveredEntityAddress, Contact: cfg.PrivacyOfficerContact, Unset: cfg.LetterheadUnset()}})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/fhir/", fhir.Headers(authn.Require(fhir.NewHandler(fhir.HandlerConfig{Index: index,
		Authorize: accounting.AuthenticatedCaller, Record: record}))))
	mux.Handle("/officer/", pages)
	mux.Handle("/", authn.Require(http.NotFoundHandler()))
	return mux, nil
}
