package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/settings"
)

func cmdDev(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(settings.Dev, "dev", `
Runs everything on this machine with no set-up: an in-process NATS
JetStream server with the stream created, a demo data set published through
the real event contract, a fresh RSA dev key served as a JWKS on the admin
listener (/.well-known/jwks.json), and the full serve stack. Once the read
model has caught up it prints a token and ready-to-paste curl commands on
stdout. Ctrl-C stops it cleanly.

Data goes to a temporary directory, removed on exit, unless --data-dir is
given (LOOKUP_DATA_DIR is not used by dev); with --data-dir the stream, the
read model and the dev key (<data-dir>/dev-key.pem) survive restarts.
Without it the dev key is the per-user one, ~/.cache/lookupd/dev-key.pem
(under $XDG_CACHE_HOME when set), created on first use. "lookupd token"
uses the same key by default (with the same --data-dir, if any). Logs are
text unless LOOKUP_LOG_FORMAT or --log-format say otherwise.`, getenv)
	if err != nil {
		return err
	}
	dataDir := c.Flags.StringLong("data-dir", "", "directory for the NATS store, the read model and the dev key (default: a temporary directory removed on exit)")
	tokenTTL := c.PositiveDuration("token-ttl", 12*time.Hour, "lifetime of the printed token")
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	logger, flushLogs := lifecycle.NewLog(stderr, c.Config.Logger)
	defer flushLogs()
	return runDev(ctx, c.Config, logger, stdout, *dataDir, *tokenTTL, getenv)
}

// runDev runs the dev mode (see cmdDev): the serve stack against a dev
// environment (dev.StartEnv). dataDir "" means a temporary directory removed on
// return.
func runDev(ctx context.Context, cfg settings.Config, logger *slog.Logger, stdout io.Writer, dataDir string, tokenTTL time.Duration, getenv func(string) string) (err error) {
	env, err := dev.StartEnv(ctx, dev.EnvConfig{DataDir: dataDir, Stream: cfg.Stream, Getenv: getenv, Logger: logger})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, env.Close()) }()

	scfg := cfg
	scfg.NATSURL = env.NATSURL
	scfg.DataDir = filepath.Join(env.Dir, "store")
	var tenants []string
	if cfg.TenantClaim != "" {
		tenants = env.Data.Businesses
	}
	opts := serveOptions{
		keys:       env.Keys,
		adminExtra: map[string]http.Handler{"/.well-known/jwks.json": env.JWKSHandler()},
		onReady: func(apiAddr, adminAddr string) {
			tok, err := dev.Mint(env.Key, dev.TokenRequest{
				Issuer: cfg.Issuer, Audience: cfg.Audience, Subject: "dev-user", Scope: dev.Scopes,
				TTL: tokenTTL, TenantClaim: cfg.TenantClaim, Tenants: tenants, Now: time.Now(),
			})
			if err != nil {
				logger.Error("mint dev token", "err", err)
				return
			}
			lifecycle.WriteLogOut(logger) // the start-up lines come before the banner
			dev.WriteBanner(stdout, dev.Banner{
				API: dev.HTTPURL(apiAddr), Admin: dev.HTTPURL(adminAddr), NATS: env.NATSURL, Stream: cfg.Stream,
				DataDir: env.Dir, Temp: env.Temp, KeyPath: env.KeyPath, Token: tok, TTL: tokenTTL, Demo: env.Data,
				MoreTokens: dev.MoreTokensCommand(devTokenFlags(cfg, env.KeyPath, dev.KeyPath(getenv, "", false), tenants)),
			})
		},
	}
	return serve(ctx, scfg, logger, opts)
}

// devTokenFlags describes, for the banner's token command, the dev server
// cfg configures with its key at keyPath (defaultKey: the one "lookupd
// token" takes by itself) and its tenants.
func devTokenFlags(cfg settings.Config, keyPath, defaultKey string, tenants []string) dev.TokenFlags {
	return dev.TokenFlags{KeyPath: keyPath, DefaultKey: defaultKey,
		Issuer: cfg.Issuer, DefaultIssuer: settings.DevIssuer, Audience: cfg.Audience, DefaultAudience: settings.DevAudience,
		TenantClaim: cfg.TenantClaim, Tenants: tenants}
}
