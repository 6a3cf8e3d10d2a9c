package main

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lookup/persons/internal/demo"
	"github.com/lookup/persons/internal/devkey"
	"github.com/lookup/persons/internal/devnats"
	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/logbuffer"
	"github.com/lookup/persons/internal/shellquote"
	"github.com/lookup/persons/query"
)

// devScopes are the scopes of the token dev prints.
const devScopes = "read:persons read:persons:ssn"

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
				Issuer: cfg.Issuer, Audience: cfg.Audience, Subject: "dev-user", Scope: devScopes,
				TTL: tokenTTL, TenantClaim: cfg.TenantClaim, Tenants: tenants, Now: time.Now(),
			})
			if err != nil {
				logger.Error("mint dev token", "err", err)
				return
			}
			logbuffer.WriteOut(logger) // the start-up lines come before the banner
			printDevBanner(stdout, devBanner{
				API: httpURL(apiAddr), Admin: httpURL(adminAddr), NATS: natsURL, Stream: cfg.Stream,
				DataDir: dataDir, Temp: temp, KeyPath: keyPath, Token: tok, TTL: tokenTTL, Demo: data,
				MoreTokens: moreTokensCommand(keyPath, devkey.Path(getenv, "", false), cfg, tenants),
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

// httpURL returns the base URL of a bound listener address, naming
// localhost when it listens on every interface.
func httpURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

type devBanner struct {
	API, Admin, NATS, Stream string
	DataDir                  string
	Temp                     bool
	KeyPath                  string
	Token                    string
	TTL                      time.Duration
	Demo                     *demo.Data
	// MoreTokens is the command line that mints more tokens this dev
	// server accepts.
	MoreTokens string
}

// repoLookupd is how the banner's commands run lookupd: from the
// repository, as the README's do.
const repoLookupd = "go run ./cmd/lookupd"

// readmeTokenCommand is the token command of the README: what
// moreTokensCommand prints for "make run" with no flags.
const readmeTokenCommand = repoLookupd + " token --scope 'read:persons read:persons:ssn'"

// moreTokensCommand returns the "lookupd token" command line (run from the
// repository) that mints tokens the dev server configured by cfg accepts,
// naming only what differs from the token command's defaults: its key
// (unless it is defaultKey, the one "lookupd token" takes by itself), its
// issuer and audience and, when tenancy is on, its tenancy claim naming
// tenants.
func moreTokensCommand(keyPath, defaultKey string, cfg config, tenants []string) string {
	var args []string
	if keyPath != defaultKey {
		args = append(args, "--key", keyPath)
	}
	args = append(args, "--scope", devScopes)
	if cfg.Issuer != devIssuer {
		args = append(args, "--issuer", cfg.Issuer)
	}
	if cfg.Audience != devAudience {
		args = append(args, "--audience", cfg.Audience)
	}
	if cfg.TenantClaim != "" {
		args = append(args, "--tenant-claim", cfg.TenantClaim, "--tenant", strings.Join(tenants, ","))
	}
	return repoLookupd + " token " + quoteArgs(args)
}

// quoteArgs returns args as words of a shell command line.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellquote.Quote(a)
	}
	return strings.Join(q, " ")
}

// printDevBanner writes the token and the example requests of dev mode.
func printDevBanner(w io.Writer, b devBanner) {
	removed := ""
	if b.Temp {
		removed = " (removed on exit)"
	}
	auth := `-H "Authorization: Bearer $TOKEN"`
	var sb strings.Builder
	fmt.Fprintf(&sb, `
lookupd dev is ready.

  API     %[1]s   (OpenAPI document: %[1]s/openapi.yaml)
  admin   %[2]s   (/livez /readyz /metrics /.well-known/jwks.json)
  NATS    %[3]s   (stream %[4]s)
  data    %[5]s%[6]s

A token valid for %[7]s with scopes %[8]q:

export TOKEN='%[9]s'

Get Person (a consumer, a business contact, a deleted consumer: 404):

  curl -s %[10]s %[1]s/api/v1/persons/%[11]s
  curl -s %[10]s %[1]s/api/v1/persons/%[12]s
  curl -s %[10]s %[1]s/api/v1/persons/%[13]s

Get Authorized Signers (without, then with protected personal data;
ssn_mode is LAST4, MASKED, FULL or NONE):

  curl -s %[10]s '%[1]s/api/v1/authorized-signers?consumer_id=%[11]s'
  curl -s %[10]s '%[1]s/api/v1/authorized-signers?consumer_id=%[11]s&expand=PROTECTED_PERSONAL_DATA'
  curl -s %[10]s '%[1]s/api/v1/authorized-signers?consumer_id=%[11]s&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL'

The accounting of disclosures of a signer (after the requests above), the
dead letters, and readiness, from the repository:

  %[15]s audit --person %[16]s --nats-url %[17]s
  %[15]s dlq ls --nats-url %[17]s
  curl -s %[2]s/readyz

More tokens this server accepts, from the repository:
  %[14]s
Stop with Ctrl-C.
`, b.API, b.Admin, b.NATS, b.Stream, b.DataDir, removed, shortDuration(b.TTL), devScopes, b.Token, auth,
		b.Demo.Consumer, b.Demo.BusinessContact, b.Demo.DeletedConsumer, b.MoreTokens,
		repoLookupd, b.Demo.Signer, shellquote.Quote(b.NATS))
	_, _ = io.WriteString(w, sb.String())
}

// shortDuration formats d without trailing zero units ("12h", "1h30m").
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
