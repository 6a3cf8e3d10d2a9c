package main

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/lookup/persons/internal/demo"
	"github.com/lookup/persons/internal/devbanner"
	"github.com/lookup/persons/internal/devkey"
	"github.com/lookup/persons/internal/devnats"
	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/logbuffer"
	"github.com/lookup/persons/query"
)

func cmdDev(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := newCommand(inDev, "dev", `
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
	dataDir := c.fs.StringLong("data-dir", "", "directory for the NATS store, the read model and the dev key (default: a temporary directory removed on exit)")
	tokenTTL := positiveDuration(c.fs, "token-ttl", 12*time.Hour, "lifetime of the printed token")
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	logger, flushLogs := bufferedLogger(c.cfg, stderr)
	defer flushLogs()
	return dev(ctx, c.cfg, logger, stdout, *dataDir, *tokenTTL, getenv)
}

// dev runs the dev mode (see cmdDev). dataDir "" means a temporary
// directory removed on return.
func dev(ctx context.Context, cfg config, logger *slog.Logger, stdout io.Writer, dataDir string, tokenTTL time.Duration, getenv func(string) string) (err error) {
	temp := dataDir == ""
	if temp {
		if dataDir, err = os.MkdirTemp("", "lookupd-dev-"); err != nil {
			return fmt.Errorf("dev data directory: %w", err)
		}
		defer func() {
			if rerr := os.RemoveAll(dataDir); rerr != nil {
				err = errors.Join(err, fmt.Errorf("remove dev data directory: %w", rerr))
			}
		}()
	} else if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("dev data directory: %w", err)
	}

	ns, err := devnats.Start("lookupd-dev", filepath.Join(dataDir, "nats"))
	if err != nil {
		return err
	}
	defer ns.Close()
	natsURL := ns.URL
	logger.Info("dev NATS server started", "url", redactURLs(natsURL))

	data, err := demo.New()
	if err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	if err := demo.Seed(ctx, natsURL, cfg.Stream, data, logger); err != nil {
		return err
	}

	keyPath := devkey.Path(getenv, dataDir, !temp)
	key, jwks, keys, err := devSigningKey(logger, keyPath, dataDir)
	if err != nil {
		return err
	}

	scfg := cfg
	scfg.NATSURL = natsURL
	scfg.DataDir = filepath.Join(dataDir, "store")
	var tenants []string
	if cfg.TenantClaim != "" {
		tenants = data.Businesses
	}
	opts := serveOptions{
		keys: keys,
		adminExtra: map[string]http.Handler{
			"/.well-known/jwks.json": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/jwk-set+json")
				w.Header().Set("Cache-Control", "no-store")
				_, _ = w.Write(jwks)
			}),
		},
		onReady: func(apiAddr, adminAddr string) {
			tok, err := devkey.Mint(key, devkey.TokenRequest{
				Issuer: cfg.Issuer, Audience: cfg.Audience, Subject: "dev-user", Scope: devbanner.Scopes,
				TTL: tokenTTL, TenantClaim: cfg.TenantClaim, Tenants: tenants, Now: time.Now(),
			})
			if err != nil {
				logger.Error("mint dev token", "err", err)
				return
			}
			logbuffer.WriteOut(logger) // the start-up lines come before the banner
			devbanner.Write(stdout, devbanner.Banner{
				API: devbanner.HTTPURL(apiAddr), Admin: devbanner.HTTPURL(adminAddr), NATS: natsURL, Stream: cfg.Stream,
				DataDir: dataDir, Temp: temp, KeyPath: keyPath, Token: tok, TTL: tokenTTL, Demo: data,
				MoreTokens: devbanner.MoreTokensCommand(devTokenFlags(cfg, keyPath, devkey.Path(getenv, "", false), tenants)),
			})
		},
	}
	return serve(ctx, scfg, logger, opts)
}

// devSigningKey loads (or creates) the dev key at keyPath and writes the
// JWKS of its public half into dataDir; it returns the key, that JWKS and
// the verification keys read back from the file.
func devSigningKey(logger *slog.Logger, keyPath, dataDir string) (*rsa.PrivateKey, []byte, *query.JWKS, error) {
	key, err := devkey.LoadOrCreate(keyPath)
	if err != nil {
		return nil, nil, nil, err
	}
	keyfile.WarnLoose(logger, keyfile.Secret("dev signing key (--data-dir)", keyPath))
	jwks, jwksPath, err := devkey.WriteJWKS(key, dataDir)
	if err != nil {
		return nil, nil, nil, err
	}
	keys, err := query.LoadJWKSFile(jwksPath)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("dev JWKS: %w", err)
	}
	return key, jwks, keys, nil
}

// devTokenFlags describes, for the banner's token command, the dev server
// cfg configures with its key at keyPath (defaultKey: the one "lookupd
// token" takes by itself) and its tenants.
func devTokenFlags(cfg config, keyPath, defaultKey string, tenants []string) devbanner.TokenFlags {
	return devbanner.TokenFlags{KeyPath: keyPath, DefaultKey: defaultKey,
		Issuer: cfg.Issuer, DefaultIssuer: devIssuer, Audience: cfg.Audience, DefaultAudience: devAudience,
		TenantClaim: cfg.TenantClaim, Tenants: tenants}
}
