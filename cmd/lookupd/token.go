package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/settings"
)

// mintHelp is the help of "lookupd token".
const mintHelp = `
Mints a token signed with the dev key of "lookupd dev", and prints it on
stdout. For development only: a real deployment verifies tokens of its own
identity provider (LOOKUP_JWKS_URL).

  TOKEN=$(lookupd token --scope 'read:persons read:persons:ssn')

The key is the one "lookupd dev" uses: <data-dir>/dev-key.pem when
--data-dir (or LOOKUP_DATA_DIR) is given, as for "lookupd dev --data-dir",
else the per-user dev key ~/.cache/lookupd/dev-key.pem (under
$XDG_CACHE_HOME when set); --key names any other.

With --print-jwks it prints the JWKS of the key's public half instead, for
a server's LOOKUP_JWKS_FILE. With --create the key is created when missing.
With --count N it prints N distinct tokens, one a line, each with its own
jti claim (for a load test: see "make loadtest").`

func cmdToken(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	// Its settings' defaults are those of the tokens lookupd dev accepts.
	c, err := settings.NewCommand(settings.Token, "token", mintHelp, getenv)
	if err != nil {
		return err
	}
	var (
		keyPath   = c.Flags.StringLong("key", "", "PEM file of the dev RSA key (default: the key of lookupd dev, see above)")
		scope     = c.Flags.StringLong("scope", "read:persons", "space-separated scopes")
		ttl       = c.PositiveDuration("ttl", time.Hour, "lifetime of the token")
		sub       = c.Flags.StringLong("sub", "dev-user", "subject (sub claim)")
		tenants   = c.Flags.StringLong("tenant", "", "comma-separated business ids for the tenancy claim (named by --tenant-claim)")
		printJWKS = c.Flags.BoolLong("print-jwks", "print the public JWKS of the key instead of a token")
		create    = c.Flags.BoolLong("create", "create the key file when it does not exist")
		count     = c.Flags.IntLong("count", 1, "number of tokens to mint, one a line; more than one gives each a distinct jti claim")
	)
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	if *keyPath == "" {
		*keyPath = dev.KeyPath(getenv, c.Config.DataDir, c.Given("data-dir"))
	}
	if *count < 1 {
		return c.Refuse(stderr, fmt.Errorf("--count %d: want at least 1", *count))
	}
	req := dev.TokenRequest{
		Issuer:   c.Config.Issuer,
		Audience: c.Config.Audience,
		Subject:  *sub,
		Scope:    *scope,
		TTL:      *ttl,
		Now:      time.Now(),
	}
	if req.Tenants, err = dev.ParseTenants(*tenants); err != nil {
		return c.Refuse(stderr, fmt.Errorf("--tenant %w", err))
	}
	// The tenancy claim is added only with --tenant business ids: a
	// configured claim name alone adds nothing (not an empty claim).
	if len(req.Tenants) > 0 {
		req.TenantClaim = c.Config.TenantClaim
		if req.TenantClaim == "" { // --tenant-claim ''
			req.TenantClaim = settings.DefaultTenantClaim
		}
	}
	key, err := dev.LoadKeyFor(*keyPath, *create)
	if err != nil {
		return err
	}
	if *printJWKS {
		b, err := dev.PublicJWKS(key)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	return dev.MintN(stdout, key, req, *count)
}
