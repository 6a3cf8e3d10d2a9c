package main

//go:generate go test -run TestConfigurationDoc -update .

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/lookup/persons/internal/memlimit"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/projector"
)

// config is the configuration of every command. Each setting comes from a
// flag, else from its environment variable, else from its default: the flag
// wins over the environment, and an empty variable counts as unset. A
// command reads only the settings of the table that name it; the others
// stay zero.
type config struct {
	HTTPAddr          string
	AdminAddr         string
	NATSURL           string
	Stream            string
	DataDir           string
	EncryptionKeyFile string
	JWKSURL           string
	JWKSFile          string
	Issuer            string
	Audience          string
	TenantClaim       string
	TokenCacheSize    int
	JWKSAllowHTTP     bool
	LogFormat         string
	LogLevel          string
	ShutdownTimeout   time.Duration
	ShutdownDelay     time.Duration
	AdminTokenFile    string
	Audit             string // audit.Mode
	AuditStream       string
	RequirePurpose    bool
	ReplicaID         string
	PProf             bool          // net/http/pprof on the admin listener
	MemoryBudget      int64         // bytes; 0: no budget; memlimit.Auto: from the container's limit
	MaxPositionWait   time.Duration // longest wait for Lookup-Min-Position
	MaxStaleness      time.Duration // staleness bound; 0: off
	accountingConfig
	securityConfig
	operationsConfig
}

// securityConfig holds the settings of the NATS connection's security, the
// API's HTTPS and the token audience opt-out (docs/configuration.md).
type securityConfig struct {
	NATSCreds        string
	NATSNkeyFile     string
	NATSUser         string
	NATSPasswordFile string
	NATSTokenFile    string
	NATSCAFile       string
	NATSCertFile     string
	NATSKeyFile      string
	NATSInboxPrefix  string
	TLSCertFile      string
	TLSKeyFile       string
	TLSClientCAFile  string
	AllowNoAudience  bool
	AdminTLS         bool
}

// natsSecurity returns the natsconn.Security of c.
func (c securityConfig) natsSecurity() natsconn.Security {
	return natsconn.Security{CredsFile: c.NATSCreds, NkeyFile: c.NATSNkeyFile, User: c.NATSUser,
		PasswordFile: c.NATSPasswordFile, TokenFile: c.NATSTokenFile, CAFile: c.NATSCAFile,
		CertFile: c.NATSCertFile, KeyFile: c.NATSKeyFile}
}

// accountingConfig holds the settings of the accounting service (lookupd
// audit serve) and of lookupd audit's use of it.
type accountingConfig struct {
	AccountingDir       string // the accounting index's Badger directory
	AccountingURL       string // lookupd audit serve's URL; "": scan the stream
	AccountingTokenFile string // bearer token (scope read:audit) for AccountingURL
}

// operationsConfig holds the settings of snapshots and rebuilds.
type operationsConfig struct {
	SnapshotBucket    string        // JetStream Object Store bucket; "": no snapshots, no bootstrap
	SnapshotInterval  time.Duration // between snapshots; 0: only on request
	SnapshotKeep      int           // snapshots of the stream kept in the bucket
	RebuildOnMismatch bool          // rebuild a model of another stream instead of refusing to start
}

// cmdSet names commands of lookupd, as a set: the commands that read a
// setting. "dlq" stands for dlq ls and dlq replay, "audit" for audit and
// audit verify; "audit serve" is the accounting service.
type cmdSet uint8

const (
	inServe cmdSet = 1 << iota
	inProject
	inDev
	inDemo
	inDLQ
	inAudit
	inToken
	inAuditServe

	// inNATS are the commands that connect to a NATS server of their
	// configuration; inSnapshots those that write or restore snapshots;
	// inServers the services that answer HTTP requests with bearer
	// tokens (their JWKS, issuer, audience and HTTPS).
	inNATS      = inServe | inProject | inDemo | inDLQ | inAudit | inAuditServe
	inSnapshots = inServe | inProject
	inServers   = inServe | inAuditServe
)

// cmdNames are the names of the commands of cmdSet, in the order of the
// help (docs/configuration.md lists them so).
var cmdNames = []struct {
	in   cmdSet
	name string
}{{inServe, "serve"}, {inProject, "project"}, {inDev, "dev"}, {inDemo, "demo"}, {inDLQ, "dlq"}, {inAudit, "audit"}, {inToken, "token"},
	{inAuditServe, "audit serve"}}

// setting is one row of the settings table: a flag, its environment
// variable (envName), its default, what it means, the commands that read
// it, and how its value is parsed into config.
type setting struct {
	name  string // the flag; the variable is envName(name)
	def   string // "" for none
	usage string
	in    cmdSet
	// per are the defaults and meanings of commands where they differ
	// from def and usage.
	per map[cmdSet]variant
	parser
}

// variant is a command's own default or meaning of a setting ("" keeps
// the table's).
type variant struct{ def, usage string }

// parser parses a setting's value into config.
type parser struct {
	arg    string // placeholder of the value in the help
	isBool bool
	set    func(c *config, v string) error
}

// envName is the environment variable of the setting flag:
// LOOKUP_ and the flag in upper case, dashes as underscores.
func envName(flag string) string {
	return "LOOKUP_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// defaultIn returns the default of s for the command in.
func (s setting) defaultIn(in cmdSet) string {
	if v := s.per[in]; v.def != "" {
		return v.def
	}
	return s.def
}

// usageIn returns the meaning of s for the command in.
func (s setting) usageIn(in cmdSet) string {
	if v := s.per[in]; v.usage != "" {
		return v.usage
	}
	return s.usage
}

// str parses any string into dst.
func str(dst func(c *config) *string) parser {
	return parser{arg: "STRING", set: func(c *config, v string) error { *dst(c) = v; return nil }}
}

// oneOf parses one of the words valid into dst; what names the setting
// in errors.
func oneOf(what string, dst func(c *config) *string, valid ...string) parser {
	return parser{arg: strings.Join(valid, "|"), set: func(c *config, v string) error {
		for _, w := range valid {
			if v == w {
				*dst(c) = v
				return nil
			}
		}
		last := len(valid) - 1
		return fmt.Errorf("%s %q: want %s or %s", what, v, strings.Join(valid[:last], ", "), valid[last])
	}}
}

// boolean parses true or false into dst; what names the setting in errors.
func boolean(what string, dst func(c *config) *bool) parser {
	return parser{isBool: true, set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s %q: want true or false", what, v)
		}
		*dst(c) = b
		return nil
	}}
}

// atLeast parses a whole number of at least least into dst; what names
// the setting in errors.
func atLeast(what string, least int, dst func(c *config) *int) parser {
	return parser{arg: "N", set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < least {
			return fmt.Errorf("%s %q: want a whole number, %d or more", what, v, least)
		}
		*dst(c) = n
		return nil
	}}
}

// duration parses a duration into dst: positive, or 0 too when zeroOK;
// what names the setting and want says what is wanted in errors.
func duration(what, want string, zeroOK bool, dst func(c *config) *time.Duration) parser {
	return parser{arg: "DURATION", set: func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d == 0 && !zeroOK) {
			return fmt.Errorf("%s %q: want %s", what, v, want)
		}
		*dst(c) = d
		return nil
	}}
}

// logLevel parses a slog level name.
var logLevel = parser{arg: "LEVEL", set: func(c *config, v string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		return fmt.Errorf("log level %q: want debug, info, warn or error", v)
	}
	c.LogLevel = v
	return nil
}}

// memoryBudget parses "auto" (memlimit.Auto) or a size: 0, or at least
// projector.MinMemoryBudget.
var memoryBudget = parser{arg: "SIZE", set: func(c *config, v string) error {
	if v == "auto" {
		c.MemoryBudget = memlimit.Auto
		return nil
	}
	n, err := humanize.ParseBytes(v)
	switch {
	case err != nil:
		return fmt.Errorf("memory budget %q: want auto or a size such as 192MiB or 1GiB", v)
	case n != 0 && n < projector.MinMemoryBudget:
		return fmt.Errorf("memory budget %q: want 0 or at least 32MiB", v)
	case n > 1<<50:
		return fmt.Errorf("memory budget %q: too large", v)
	}
	c.MemoryBudget = int64(n)
	return nil
}}

// The issuer and audience of lookupd dev's tokens.
const (
	devIssuer   = "urn:lookupd:dev"
	devAudience = "lookup"
)

// defaultTenantClaim names the tenancy claim of minted tokens when tenants
// are given but LOOKUP_TENANT_CLAIM is not set.
const defaultTenantClaim = "business_ids"

// settings is the table of every setting of every command: each command's
// flags, its --help and docs/configuration.md are made from it.
var settings = []setting{
	{name: "http-addr", def: ":8080", usage: "API listener address", in: inServe | inDev | inAuditServe,
		per:    map[cmdSet]variant{inAuditServe: {def: ":8081", usage: "accounting search listener address (GET /fhir/AuditEvent)"}},
		parser: str(func(c *config) *string { return &c.HTTPAddr })},
	{name: "admin-addr", def: ":9090", usage: "admin listener address (/livez, /readyz, /metrics)", in: inServe | inDev | inAuditServe,
		per:    map[cmdSet]variant{inAuditServe: {def: ":9091"}},
		parser: str(func(c *config) *string { return &c.AdminAddr })},
	{name: "nats-url", def: "nats://127.0.0.1:4222", usage: "NATS JetStream server URL(s), comma-separated", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSURL })},
	{name: "stream", def: "PERSONS", usage: "source JetStream stream", in: inServe | inProject | inDev | inDemo,
		per:    map[cmdSet]variant{inDemo: {usage: "stream that holds persons.> and receives the events (it must exist)"}},
		parser: str(func(c *config) *string { return &c.Stream })},
	{name: "data-dir", def: "./data", usage: "Badger read model directory", in: inServe | inProject | inToken,
		per:    map[cmdSet]variant{inToken: {usage: "data directory of lookupd dev, where the default --key is"}},
		parser: str(func(c *config) *string { return &c.DataDir })},
	{name: "encryption-key-file", usage: "AES key file for encryption at rest of the read model (none: unencrypted)", in: inServe | inProject | inDev,
		parser: str(func(c *config) *string { return &c.EncryptionKeyFile })},
	{name: "jwks-url", usage: "URL of the JWKS that verifies tokens (cached, refreshed)", in: inServers,
		parser: str(func(c *config) *string { return &c.JWKSURL })},
	{name: "jwks-file", usage: "file holding the JWKS that verifies tokens", in: inServers,
		parser: str(func(c *config) *string { return &c.JWKSFile })},
	{name: "jwks-allow-http", def: "false", usage: "allow a plain http:// JWKS URL to a host that is not loopback", in: inServers,
		parser: boolean("jwks allow http", func(c *config) *bool { return &c.JWKSAllowHTTP })},
	{name: "issuer", usage: "required token iss (serve refuses to start without it)", in: inServers | inDev | inToken,
		per: map[cmdSet]variant{inDev: {def: devIssuer},
			inToken: {def: devIssuer, usage: "iss claim of the token; match the server's (the default is lookupd dev's)"}},
		parser: str(func(c *config) *string { return &c.Issuer })},
	{name: "audience", usage: "required token aud (serve refuses to start without it unless --allow-no-audience)", in: inServers | inDev | inToken,
		per: map[cmdSet]variant{inDev: {def: devAudience},
			inToken: {def: devAudience, usage: "aud claim of the token; match the server's (the default is lookupd dev's)"}},
		parser: str(func(c *config) *string { return &c.Audience })},
	{name: "allow-no-audience", def: "false", usage: "serve without LOOKUP_AUDIENCE, for an identity provider that sets no aud (logged as a warning)", in: inServers,
		parser: boolean("allow no audience", func(c *config) *bool { return &c.AllowNoAudience })},
	{name: "tenant-claim", usage: "token claim listing the caller's business ids; enables tenancy checks", in: inServe | inDev | inToken,
		per:    map[cmdSet]variant{inToken: {def: defaultTenantClaim, usage: "name of the claim carrying --tenant (added only with --tenant business ids)"}},
		parser: str(func(c *config) *string { return &c.TenantClaim })},
	{name: "token-cache-size", def: "10000", usage: "verified tokens remembered, so a token presented again is not verified afresh (0: off)", in: inServers | inDev,
		parser: atLeast("token cache size", 0, func(c *config) *int { return &c.TokenCacheSize })},
	{name: "log-format", def: "json", usage: "log format: json or text", in: inServe | inProject | inDev | inDLQ | inAuditServe,
		per:    map[cmdSet]variant{inDev: {def: "text"}, inDLQ: {def: "text"}},
		parser: oneOf("log format", func(c *config) *string { return &c.LogFormat }, "json", "text")},
	{name: "log-level", def: "info", usage: "log level: debug, info, warn or error", in: inServe | inProject | inDev | inDLQ | inAuditServe,
		per: map[cmdSet]variant{inDLQ: {def: "warn"}}, parser: logLevel},
	{name: "memory-budget", def: "auto", usage: "memory the process is sized for: Badger's memtables, caches and value log, and Go's soft memory limit of 3/4 of it; auto: 3/4 of the container's memory limit (cgroup v1 or v2), 192MiB without one (0: Badger's defaults, no soft limit)",
		in: inServe | inProject | inAuditServe, parser: memoryBudget},
	{name: "shutdown-timeout", def: "10s", usage: "how long a shutdown waits for in-flight requests", in: inServe | inDev | inAuditServe,
		parser: duration("shutdown timeout", "a positive duration such as 10s", false, func(c *config) *time.Duration { return &c.ShutdownTimeout })},
	{name: "shutdown-delay", def: "0s", usage: "how long a shutdown keeps serving, not ready, before it stops accepting requests (load balancers update)", in: inServe | inAuditServe,
		parser: duration("shutdown delay", "a duration such as 5s, or 0s", true, func(c *config) *time.Duration { return &c.ShutdownDelay })},
	{name: "admin-token-file", usage: "file holding the bearer token of the state-changing admin endpoints (none: they are off)", in: inServe,
		parser: str(func(c *config) *string { return &c.AdminTokenFile })},
	{name: "audit", def: "required", usage: "audit ledger of disclosures of protected data: required (no disclosure unless recorded), best-effort or off", in: inServe | inDev,
		parser: oneOf("audit", func(c *config) *string { return &c.Audit }, "required", "best-effort", "off")},
	{name: "audit-stream", def: "PERSONS_AUDIT", usage: "JetStream stream of the audit ledger (created when missing)", in: inServe | inAudit | inAuditServe,
		per: map[cmdSet]variant{inAudit: {usage: "JetStream stream of the audit ledger"},
			inAuditServe: {usage: "JetStream stream of the audit ledger: indexed, and where each search is recorded"}},
		parser: str(func(c *config) *string { return &c.AuditStream })},
	{name: "require-purpose", def: "false", usage: "require the Lookup-Purpose header on requests for protected data", in: inServe | inDev,
		parser: boolean("require purpose", func(c *config) *bool { return &c.RequirePurpose })},
	{name: "replica-id", usage: "name of this replica in audit records (none: the host name)", in: inServe | inAuditServe,
		per:    map[cmdSet]variant{inAuditServe: {usage: "name of this accounting service in the audit records of its searches, its chain (none: accounting- and the host name)"}},
		parser: str(func(c *config) *string { return &c.ReplicaID })},
	{name: "pprof", def: "false", usage: "serve net/http/pprof under /debug/pprof/ on the admin listener: true or false", in: inServers | inDev,
		parser: boolean("pprof", func(c *config) *bool { return &c.PProf })},
	{name: "max-position-wait", def: "2s", usage: "longest wait of a request for its Lookup-Min-Position before a 503 position-not-reached", in: inServe | inDev,
		parser: duration("max position wait", "a positive duration such as 2s", false, func(c *config) *time.Duration { return &c.MaxPositionWait })},
	{name: "max-staleness", def: "0s", usage: "staleness bound: not ready, and API answers 503 stale, while the oldest unapplied event or the loss of the stream is older (0s: off)", in: inServe | inDev,
		parser: duration("max staleness", "a duration such as 30s, or 0s (off)", true, func(c *config) *time.Duration { return &c.MaxStaleness })},

	// The accounting service.
	{name: "accounting-dir", def: "./accounting", usage: "Badger directory of the accounting index (a projection of the audit stream; deleting it rebuilds it)", in: inAuditServe,
		parser: str(func(c *config) *string { return &c.AccountingDir })},
	{name: "accounting-url", usage: "URL of lookupd audit serve: --person asks it instead of scanning the audit stream (none: scan)", in: inAudit,
		parser: str(func(c *config) *string { return &c.AccountingURL })},
	{name: "accounting-token-file", usage: "file holding the bearer token (scope read:audit) sent to --accounting-url", in: inAudit,
		parser: str(func(c *config) *string { return &c.AccountingTokenFile })},

	// The NATS connection's security.
	{name: "nats-creds", usage: "NATS credentials file (user JWT and nkey seed)", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSCreds })},
	{name: "nats-nkey-file", usage: "NATS nkey seed file", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSNkeyFile })},
	{name: "nats-user", usage: "NATS user name (with --nats-password-file)", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSUser })},
	{name: "nats-password-file", usage: "file holding the NATS user's password", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSPasswordFile })},
	{name: "nats-token-file", usage: "file holding a NATS authentication token", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSTokenFile })},
	{name: "nats-ca-file", usage: "PEM CA bundle that verifies the NATS servers' certificates (TLS)", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSCAFile })},
	{name: "nats-cert-file", usage: "client certificate for NATS (mutual TLS, with --nats-key-file)", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSCertFile })},
	{name: "nats-key-file", usage: "client key for NATS (mutual TLS)", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSKeyFile })},
	{name: "nats-inbox-prefix", def: natsconn.DefaultInboxPrefix, usage: "prefix of lookupd's NATS reply subjects (a least-privilege deployment allows only lookupd's user under it)", in: inNATS,
		parser: str(func(c *config) *string { return &c.NATSInboxPrefix })},

	// The API's HTTPS.
	{name: "tls-cert-file", usage: "certificate (PEM) of the API's HTTPS listener; reloaded when the file changes (none: plain HTTP)", in: inServers,
		parser: str(func(c *config) *string { return &c.TLSCertFile })},
	{name: "tls-key-file", usage: "key (PEM) of the API's HTTPS certificate", in: inServers,
		parser: str(func(c *config) *string { return &c.TLSKeyFile })},
	{name: "tls-client-ca-file", usage: "CA bundle (PEM): the API requires client certificates it verifies (mutual TLS)", in: inServers,
		parser: str(func(c *config) *string { return &c.TLSClientCAFile })},
	{name: "admin-tls", def: "false", usage: "true: the admin listener speaks HTTPS too, with the API's certificate (no client certificates asked)", in: inServers,
		parser: boolean("admin tls", func(c *config) *bool { return &c.AdminTLS })},

	// Snapshots and rebuilds.
	{name: "snapshot-bucket", usage: "JetStream Object Store bucket of read model snapshots: written every --snapshot-interval and on POST /snapshot, restored into an empty data directory at start (none: off)", in: inSnapshots,
		parser: str(func(c *config) *string { return &c.SnapshotBucket })},
	{name: "snapshot-interval", def: "1h", usage: "interval between snapshots, once caught up, when --snapshot-bucket is set (0s: only on request)", in: inSnapshots,
		parser: duration("snapshot interval", "a duration such as 1h, or 0s (only on request)", true, func(c *config) *time.Duration { return &c.SnapshotInterval })},
	{name: "snapshot-keep", def: "3", usage: "snapshots of the stream kept in the bucket (older ones are deleted)", in: inSnapshots,
		parser: atLeast("snapshot keep", 1, func(c *config) *int { return &c.SnapshotKeep })},
	{name: "rebuild-on-mismatch", def: "false", usage: "true: a read model of another stream, or of an earlier incarnation of it, is rebuilt beside the old one at start-up instead of stopping serve", in: inServe,
		parser: boolean("rebuild on mismatch", func(c *config) *bool { return &c.RebuildOnMismatch })},
}

// Settings serve cannot start without (RFC 8725 sections 3.8 and 3.9 for
// the issuer and audience: else it would accept tokens meant for other
// services).
var (
	errNoJWKS     = errors.New("no JWKS configured: set LOOKUP_JWKS_URL or LOOKUP_JWKS_FILE (--jwks-url, --jwks-file)")
	errNoIssuer   = errors.New("no token issuer configured: set LOOKUP_ISSUER (--issuer) to your identity provider's iss")
	errNoAudience = errors.New("no token audience configured: set LOOKUP_AUDIENCE (--audience) to this API's aud, " +
		"or LOOKUP_ALLOW_NO_AUDIENCE=true for an identity provider that sets none")
)

// missingSettings returns the one error that names every setting serve
// needs and cfg lacks, nil when none is missing. It matches each of
// errNoJWKS, errNoIssuer and errNoAudience that applies.
func missingSettings(cfg config) error {
	var missing missingError
	if cfg.JWKSURL == "" && cfg.JWKSFile == "" {
		missing = append(missing, errNoJWKS)
	}
	if cfg.Issuer == "" {
		missing = append(missing, errNoIssuer)
	}
	if cfg.Audience == "" && !cfg.AllowNoAudience {
		missing = append(missing, errNoAudience)
	}
	if len(missing) == 0 {
		return nil
	}
	return missing
}

// missingError lists the settings missing at start-up.
type missingError []error

func (m missingError) Error() string {
	if len(m) == 1 {
		return m[0].Error()
	}
	msgs := make([]string, len(m))
	for i, err := range m {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d settings missing:\n  %s", len(m), strings.Join(msgs, "\n  "))
}

func (m missingError) Unwrap() []error { return m }
