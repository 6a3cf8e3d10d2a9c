package main

import (
	"bufio"
	"context"
	"crypto/rsa"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/google/uuid"
)

// defaultTenantClaim names the tenancy claim of minted tokens when tenants
// are given but LOOKUP_TENANT_CLAIM is not set.
const defaultTenantClaim = "business_ids"

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
	c, err := newCommand("token", mintHelp, getenv, "data-dir", "issuer", "audience", "tenant-claim")
	if err == nil {
		// The tokens lookupd dev accepts, unless told otherwise.
		c.setDefault("issuer", devIssuer)
		c.setDefault("audience", devAudience)
	}
	if err != nil {
		return err
	}
	var (
		keyPath   = c.fs.String("key", "", "PEM file of the dev RSA key (default: the key of lookupd dev, see above)")
		scope     = c.fs.String("scope", "read:persons", "space-separated scopes")
		ttl       = c.positiveDuration("ttl", time.Hour, "lifetime of the token")
		sub       = c.fs.String("sub", "dev-user", "subject (sub claim)")
		tenants   = c.fs.String("tenant", "", "comma-separated business ids for the tenancy claim (named by --tenant-claim)")
		printJWKS = c.fs.Bool("print-jwks", false, "print the public JWKS of the key instead of a token")
		create    = c.fs.Bool("create", false, "create the key file when it does not exist")
		count     = c.fs.Int("count", 1, "number of tokens to mint, one a line; more than one gives each a distinct jti claim")
	)
	c.extra = []string{"key", "scope", "ttl", "sub", "tenant", "print-jwks", "create", "count"}
	c.setUsage("data-dir", "data directory of lookupd dev, where the default --key is")
	c.setUsage("issuer", "iss claim of the token; match the server's (the default is lookupd dev's)")
	c.setUsage("audience", "aud claim of the token; match the server's (the default is lookupd dev's)")
	c.setUsage("tenant-claim", "name of the claim carrying --tenant (added only with --tenant business ids)")
	c.showDefault("tenant-claim", defaultTenantClaim)
	if err := c.parse(args, stdout, stderr); err != nil {
		return err
	}
	if *keyPath == "" {
		_, envDir := lookupEnv(getenv, "LOOKUP_DATA_DIR")
		*keyPath = devKeyPath(getenv, c.cfg.DataDir, envDir || flagGiven(c, "data-dir"))
	}
	if *count < 1 {
		return c.refuse(stderr, fmt.Errorf("--count %d: want at least 1", *count))
	}
	req := tokenRequest{
		Issuer:   c.cfg.Issuer,
		Audience: c.cfg.Audience,
		Subject:  *sub,
		Scope:    *scope,
		TTL:      *ttl,
		Now:      time.Now(),
	}
	if req.Tenants, err = parseTenants(*tenants); err != nil {
		return c.refuse(stderr, err)
	}
	// The tenancy claim is added only with --tenant business ids: a
	// configured claim name alone adds nothing (not an empty claim).
	if len(req.Tenants) > 0 {
		req.TenantClaim = c.cfg.TenantClaim
		if req.TenantClaim == "" {
			req.TenantClaim = defaultTenantClaim
		}
	}
	key, err := tokenKey(*keyPath, *create)
	if err != nil {
		return err
	}
	if *printJWKS {
		b, err := publicJWKS(key)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	return printTokens(stdout, key, req, *count)
}

// parseTenants returns the business ids of --tenant (comma-separated
// canonical UUIDs), lower-cased.
func parseTenants(list string) ([]string, error) {
	var ids []string
	for _, t := range strings.Split(list, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if err := uuid.Validate(t); err != nil || len(t) != 36 {
			return nil, fmt.Errorf("--tenant %q: want comma-separated canonical UUIDs", t)
		}
		ids = append(ids, strings.ToLower(t))
	}
	return ids, nil
}

// tokenKey loads the dev key at path, creating it when missing if create.
func tokenKey(path string, create bool) (*rsa.PrivateKey, error) {
	load := loadDevKey
	if create {
		load = loadOrCreateDevKey
	}
	key, err := load(path)
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (start \"lookupd dev\" first, pass the --key path it prints, or pass --create)", err)
	}
	return key, err
}

// printTokens mints n tokens for req with k and writes them to w, one a
// line. More than one token gives each a distinct jti claim, so that no
// two are the same.
func printTokens(w io.Writer, k *rsa.PrivateKey, req tokenRequest, n int) error {
	bw := bufio.NewWriter(w)
	for range n {
		if n > 1 {
			req.ID = uuid.NewString()
		}
		tok, err := mintToken(k, req)
		if err != nil {
			return err
		}
		fmt.Fprintln(bw, tok)
	}
	return bw.Flush()
}

// flagGiven reports whether the flag name was given on c's command line.
func flagGiven(c *command, name string) bool {
	given := false
	c.fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}
