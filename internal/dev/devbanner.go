// The banner: it writes what "lookupd dev" prints once its read model
// has caught up: the addresses, a token, and ready-to-paste commands
// against the running dev server (curl, lookupd audit, lookupd dlq,
// lookupd token). "make loadtest" parses it (loadtest.ParseBanner): a
// change of its lines must keep that parser in step.

package dev

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"
)

// Scopes are the scopes of the token the banner prints.
const Scopes = "read:persons read:persons:ssn"

// RepoLookupd is how the banner's commands run lookupd: from the
// repository, as the README's do.
const RepoLookupd = "go run ./cmd/lookupd"

// READMETokenCommand is the token command of the README: what
// MoreTokensCommand returns for "make run" with no flags.
const READMETokenCommand = RepoLookupd + " token --scope 'read:persons read:persons:ssn'"

// Banner is what the banner shows.
type Banner struct {
	// API and Admin are base URLs (see HTTPURL); NATS the dev server's URL
	// and Stream its events stream.
	API, Admin, NATS, Stream string
	// DataDir holds the dev data; Temp says it is removed on exit.
	DataDir string
	Temp    bool
	// KeyPath is the dev signing key's file.
	KeyPath string
	// Token, valid for TTL, has the scopes Scopes.
	Token string
	TTL   time.Duration
	// Demo names the ids of the example requests.
	Demo *DemoData
	// MoreTokens is the command line that mints more tokens this dev
	// server accepts (see MoreTokensCommand).
	MoreTokens string
}

// TokenFlags are what MoreTokensCommand needs to know of the dev server:
// each setting with the default "lookupd token" takes by itself.
type TokenFlags struct {
	KeyPath, DefaultKey       string
	Issuer, DefaultIssuer     string
	Audience, DefaultAudience string
	TenantClaim               string // "" when tenancy is off
	Tenants                   []string
}

// HTTPURL returns the base URL of a bound listener address, naming
// localhost when it listens on every interface.
func HTTPURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// MoreTokensCommand returns the "lookupd token" command line (run from the
// repository) that mints tokens the dev server described by f accepts,
// naming only what differs from the token command's defaults: its key
// (unless it is f.DefaultKey), its issuer and audience and, when tenancy
// is on, its tenancy claim naming f.Tenants. Every word is shell-quoted.
func MoreTokensCommand(f TokenFlags) string {
	var args []string
	if f.KeyPath != f.DefaultKey {
		args = append(args, "--key", f.KeyPath)
	}
	args = append(args, "--scope", Scopes)
	if f.Issuer != f.DefaultIssuer {
		args = append(args, "--issuer", f.Issuer)
	}
	if f.Audience != f.DefaultAudience {
		args = append(args, "--audience", f.Audience)
	}
	if f.TenantClaim != "" {
		args = append(args, "--tenant-claim", f.TenantClaim, "--tenant", strings.Join(f.Tenants, ","))
	}
	return RepoLookupd + " token " + quoteArgs(args)
}

// quoteArgs returns args as words of a shell command line.
func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = ShellQuote(a)
	}
	return strings.Join(q, " ")
}

// WriteBanner writes the banner b to w: the addresses, the token and the
// example requests of dev mode. Errors of w are ignored (it is a
// terminal).
func WriteBanner(w io.Writer, b Banner) {
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
`, b.API, b.Admin, b.NATS, b.Stream, b.DataDir, removed, shortDuration(b.TTL), Scopes, b.Token, auth,
		b.Demo.Consumer, b.Demo.BusinessContact, b.Demo.DeletedConsumer, b.MoreTokens,
		RepoLookupd, b.Demo.Signer, ShellQuote(b.NATS))
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
