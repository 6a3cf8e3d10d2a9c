package settings

//go:generate go test -run TestConfigurationDoc -update .

import (
	"strconv"
	"strings"
	"time"

	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/natsconn"
)

// Commands names commands of lookupd, as a set: the commands that read a
// setting. "dlq" stands for dlq ls and dlq replay, "audit" for audit and
// audit verify; "audit serve" is the accounting service.
type Commands uint16

const (
	Serve Commands = 1 << iota
	Project
	Dev
	Demo
	DLQ
	Audit
	Token
	AuditServe
	Erasure

	// natsCommands are the commands that connect to a NATS server of their
	// configuration; snapshotCommands those that write or restore snapshots;
	// serverCommands the services that answer HTTP requests with bearer
	// tokens (their JWKS, issuer, audience and HTTPS).
	natsCommands     = Serve | Project | Demo | DLQ | Audit | AuditServe | Erasure
	snapshotCommands = Serve | Project
	serverCommands   = Serve | AuditServe
)

// cmdNames are the names of the commands of Commands, in the order of the
// help (docs/configuration.md lists them so).
var cmdNames = []struct {
	in   Commands
	name string
}{{Serve, "serve"}, {Project, "project"}, {Dev, "dev"}, {Demo, "demo"}, {DLQ, "dlq"}, {Audit, "audit"}, {Token, "token"},
	{AuditServe, "audit serve"}, {Erasure, "erasure"}}

// setting is one row of the settings table: a flag, its environment
// variable (envName), its default, what it means, the commands that read
// it, and how its value is parsed into Config.
type setting struct {
	name  string // the flag; the variable is envName(name)
	def   string // "" for none
	usage string
	in    Commands
	// per are the defaults and meanings of commands where they differ
	// from def and usage.
	per map[Commands]variant
	// fixed are commands that do not offer the setting (no flag, no
	// variable, nothing in their --help) but run with its default.
	fixed Commands
	parser
}

// variant is a command's own default or meaning of a setting ("" keeps
// the table's).
type variant struct{ def, usage string }

// envName is the environment variable of the setting flag:
// LOOKUP_ and the flag in upper case, dashes as underscores.
func envName(flag string) string {
	return "LOOKUP_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// defaultIn returns the default of s for the command in.
func (s setting) defaultIn(in Commands) string {
	if v := s.per[in]; v.def != "" {
		return v.def
	}
	return s.def
}

// usageIn returns the meaning of s for the command in.
func (s setting) usageIn(in Commands) string {
	if v := s.per[in]; v.usage != "" {
		return v.usage
	}
	return s.usage
}

// The issuer and audience of lookupd dev's tokens.
const (
	DevIssuer   = "urn:lookupd:dev"
	DevAudience = "lookup"
)

// DefaultTenantClaim names the tenancy claim of minted tokens when tenants
// are given but LOOKUP_TENANT_CLAIM is not set.
const DefaultTenantClaim = "business_ids"

// table is the table of every setting of every command: each command's
// flags, its --help and docs/configuration.md are made from it.
var table = []setting{
	{name: "http-addr", def: ":8080", usage: "API listener address", in: Serve | Dev | AuditServe,
		per:    map[Commands]variant{AuditServe: {def: ":8081", usage: "accounting service listener address (GET /fhir/AuditEvent, the officer's page /officer/person)"}},
		parser: str(func(c *Config) *string { return &c.HTTPAddr })},
	{name: "admin-addr", def: ":9090", usage: "admin listener address (/livez, /readyz, /metrics)", in: Serve | Dev | AuditServe,
		per:    map[Commands]variant{AuditServe: {def: ":9091"}},
		parser: str(func(c *Config) *string { return &c.AdminAddr })},
	{name: "nats-url", def: "nats://127.0.0.1:4222", usage: "NATS JetStream server URL(s), comma-separated", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSURL })},
	{name: "stream", def: "PERSONS", usage: "source JetStream stream", in: Serve | Project | Dev | Demo | Erasure,
		per:    map[Commands]variant{Demo: {usage: "stream that holds persons.> and receives the events (it must exist)"}},
		parser: str(func(c *Config) *string { return &c.Stream })},
	{name: "data-dir", def: "./data", usage: "Badger read model directory", in: Serve | Project | Token,
		per:    map[Commands]variant{Token: {usage: "data directory of lookupd dev, where the default --key is"}},
		parser: str(func(c *Config) *string { return &c.DataDir })},
	{name: "encryption-key-file", usage: "AES key file for encryption at rest of the read model (none: unencrypted)", in: Serve | Project | Dev,
		parser: str(func(c *Config) *string { return &c.EncryptionKeyFile })},
	{name: "jwks-url", usage: "URL of the JWKS that verifies tokens (cached, refreshed)", in: serverCommands,
		parser: str(func(c *Config) *string { return &c.JWKSURL })},
	{name: "jwks-file", usage: "file holding the JWKS that verifies tokens", in: serverCommands,
		parser: str(func(c *Config) *string { return &c.JWKSFile })},
	{name: "jwks-allow-http", def: "false", usage: "allow a plain http:// JWKS URL to a host that is not loopback", in: serverCommands,
		parser: boolean("jwks allow http", func(c *Config) *bool { return &c.JWKSAllowHTTP })},
	{name: "issuer", usage: "required token iss (serve refuses to start without it)", in: serverCommands | Dev | Token,
		per: map[Commands]variant{Dev: {def: DevIssuer},
			Token: {def: DevIssuer, usage: "iss claim of the token; match the server's (the default is lookupd dev's)"}},
		parser: str(func(c *Config) *string { return &c.Issuer })},
	{name: "audience", usage: "required token aud (serve refuses to start without it unless --allow-no-audience)", in: serverCommands | Dev | Token,
		per: map[Commands]variant{Dev: {def: DevAudience},
			Token: {def: DevAudience, usage: "aud claim of the token; match the server's (the default is lookupd dev's)"}},
		parser: str(func(c *Config) *string { return &c.Audience })},
	{name: "allow-no-audience", def: "false", usage: "serve without LOOKUP_AUDIENCE, for an identity provider that sets no aud, accepting any client (logged as a warning; prefer --allowed-clients)", in: serverCommands,
		parser: boolean("allow no audience", func(c *Config) *bool { return &c.AllowNoAudience })},
	{name: "allowed-clients", usage: "client ids accepted, comma-separated: the token's azp, else its client_id, must be one (Amazon Cognito's access tokens carry no aud but a client_id); enough without --audience", in: serverCommands,
		parser: list("allowed clients", func(c *Config) *[]string { return &c.AllowedClients })},
	{name: "scope-claims", usage: "token claims that grant scopes, comma-separated, each a space-separated string or an array of strings (Microsoft Entra ID's application permissions: roles) (none: scope,scp)", in: serverCommands,
		parser: list("scope claims", func(c *Config) *[]string { return &c.ScopeClaims })},
	{name: "tenant-claim", usage: "token claim listing the caller's business ids; enables tenancy checks", in: Serve | Dev | Token,
		per:    map[Commands]variant{Token: {def: DefaultTenantClaim, usage: "name of the claim carrying --tenant (added only with --tenant business ids)"}},
		parser: str(func(c *Config) *string { return &c.TenantClaim })},
	{name: "token-cache-size", def: strconv.Itoa(auth.DefaultTokenCacheSize), usage: "verified tokens remembered, so a token presented again is not verified afresh (0: off)", in: serverCommands | Dev,
		parser: atLeast("token cache size", 0, func(c *Config) *int { return &c.TokenCacheSize })},
	{name: "log-format", def: "json", usage: "log format: json or text", in: Serve | Project | Dev | DLQ | AuditServe,
		per:    map[Commands]variant{Dev: {def: "text"}, DLQ: {def: "text"}},
		parser: oneOf("log format", func(c *Config) *string { return &c.LogFormat }, "json", "text")},
	{name: "log-level", def: "info", usage: "log level: debug, info, warn or error", in: Serve | Project | Dev | DLQ | AuditServe,
		per: map[Commands]variant{DLQ: {def: "warn"}}, parser: logLevel},
	{name: "memory-budget", def: "auto", usage: "memory the process is sized for: Badger's memtables, caches and value log, and Go's soft memory limit of 3/4 of it; auto: 3/4 of the container's memory limit (cgroup v1 or v2), 192MiB without one (0: Badger's defaults, no soft limit)",
		in: Serve | Project | AuditServe, parser: memoryBudget},
	{name: "shutdown-timeout", def: "10s", usage: "how long a shutdown waits for in-flight requests", in: Serve | Dev | AuditServe,
		parser: duration("shutdown timeout", "a positive duration such as 10s", false, func(c *Config) *time.Duration { return &c.ShutdownTimeout })},
	{name: "shutdown-delay", def: "0s", usage: "how long a shutdown keeps serving, not ready, before it stops accepting requests (load balancers update)", in: Serve | AuditServe,
		parser: duration("shutdown delay", "a duration such as 5s, or 0s", true, func(c *Config) *time.Duration { return &c.ShutdownDelay })},
	{name: "admin-token-file", usage: "file holding the bearer token of the state-changing admin endpoints (none: they are off)", in: Serve,
		parser: str(func(c *Config) *string { return &c.AdminTokenFile })},
	{name: "audit", def: "required", usage: "audit ledger of disclosures of protected data: required (no disclosure unless recorded), best-effort or off", in: Serve | Dev,
		fixed:  AuditServe, // the accounting service records each search: always required
		parser: oneOf("audit", func(c *Config) *string { return &c.Audit }, "required", "best-effort", "off")},
	{name: "audit-stream", def: "PERSONS_AUDIT", usage: "JetStream stream of the audit ledger (created when missing)", in: Serve | Audit | AuditServe,
		per: map[Commands]variant{Audit: {usage: "JetStream stream of the audit ledger"},
			AuditServe: {usage: "JetStream stream of the audit ledger: indexed, and where each search is recorded"}},
		parser: str(func(c *Config) *string { return &c.AuditStream })},
	{name: "require-purpose", def: "false", usage: "require the Lookup-Purpose header on requests for protected data", in: Serve | Dev,
		parser: boolean("require purpose", func(c *Config) *bool { return &c.RequirePurpose })},
	{name: "replica-id", usage: "name of this replica in audit records (none: the host name)", in: Serve | AuditServe,
		per:    map[Commands]variant{AuditServe: {usage: "name of this accounting service in the audit records of its searches, its chain (none: accounting- and the host name)"}},
		parser: str(func(c *Config) *string { return &c.ReplicaID })},
	{name: "pprof", def: "false", usage: "serve net/http/pprof under /debug/pprof/ on the admin listener: true or false", in: serverCommands | Dev,
		parser: boolean("pprof", func(c *Config) *bool { return &c.PProf })},
	{name: "max-position-wait", def: "2s", usage: "longest wait of a request for its Lookup-Min-Position before a 503 position-not-reached", in: Serve | Dev,
		parser: duration("max position wait", "a positive duration such as 2s", false, func(c *Config) *time.Duration { return &c.MaxPositionWait })},
	{name: "max-staleness", def: "0s", usage: "staleness bound: not ready, and API answers 503 stale, while the oldest unapplied event or the loss of the stream is older (0s: off)", in: Serve | Dev,
		parser: duration("max staleness", "a duration such as 30s, or 0s (off)", true, func(c *Config) *time.Duration { return &c.MaxStaleness })},

	// The accounting service.
	{name: "accounting-dir", def: "./accounting", usage: "Badger directory of the accounting index (a projection of the audit stream; deleting it rebuilds it)", in: AuditServe,
		parser: str(func(c *Config) *string { return &c.AccountingDir })},
	{name: "clients-file", usage: "clients registry (YAML): each client id's organisation and address over a span of days, shown on the officer's page (none: client ids only)", in: AuditServe,
		parser: str(func(c *Config) *string { return &c.ClientsFile })},
	{name: "purposes-file", usage: "purposes registry (YAML): each Lookup-Purpose code's statement, accountable or exempt under 45 CFR 164.528(a)(1) (none: codes only, none exempt)", in: AuditServe,
		parser: str(func(c *Config) *string { return &c.PurposesFile })},
	{name: "registries-strict", def: "false", usage: "true: refuse to run when the ledger holds a client or purpose code the registries lack (checked once the index has caught up, by reading it whole)", in: AuditServe,
		parser: boolean("registries strict", func(c *Config) *bool { return &c.RegistriesStrict })},
	{name: "officer-page-size", def: "50", usage: "disclosures a page of the officer's pages shows (GET /officer/person, GET /officer/recipient)", in: AuditServe,
		parser: atLeast("officer page size", 1, func(c *Config) *int { return &c.OfficerPageSize })},
	{name: "covered-entity-name", usage: "the covered entity's name, the first line of the letterhead of the officer's letters (this, the address or the contact unset: the letter is printed without it, and the officer's screen says so)", in: AuditServe,
		parser: line("covered entity name", func(c *Config) *string { return &c.CoveredEntityName })},
	{name: "covered-entity-address", usage: "the covered entity's postal address, in the letterhead: its lines separated by ; or a new line (at most 8)", in: AuditServe,
		parser: addressLines},
	{name: "privacy-officer-contact", usage: "how a person reaches the privacy officer (a name, mail address, telephone), the letterhead's last line, after \"Privacy officer:\"", in: AuditServe,
		parser: line("privacy officer contact", func(c *Config) *string { return &c.PrivacyOfficerContact })},
	{name: "accounting-url", usage: "URL of lookupd audit serve: --person asks it instead of scanning the audit stream (none: scan)", in: Audit,
		parser: str(func(c *Config) *string { return &c.AccountingURL })},
	{name: "accounting-token-file", usage: "file holding the bearer token (scope read:audit) sent to --accounting-url", in: Audit,
		parser: str(func(c *Config) *string { return &c.AccountingTokenFile })},

	// The NATS connection's security.
	{name: "nats-creds", usage: "NATS credentials file (user JWT and nkey seed)", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSCreds })},
	{name: "nats-nkey-file", usage: "NATS nkey seed file", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSNkeyFile })},
	{name: "nats-user", usage: "NATS user name (with --nats-password-file)", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSUser })},
	{name: "nats-password-file", usage: "file holding the NATS user's password", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSPasswordFile })},
	{name: "nats-token-file", usage: "file holding a NATS authentication token", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSTokenFile })},
	{name: "nats-ca-file", usage: "PEM CA bundle that verifies the NATS servers' certificates (TLS)", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSCAFile })},
	{name: "nats-cert-file", usage: "client certificate for NATS (mutual TLS, with --nats-key-file)", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSCertFile })},
	{name: "nats-key-file", usage: "client key for NATS (mutual TLS)", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSKeyFile })},
	{name: "nats-inbox-prefix", def: natsconn.DefaultInboxPrefix, usage: "prefix of lookupd's NATS reply subjects (a least-privilege deployment allows only lookupd's user under it)", in: natsCommands,
		parser: str(func(c *Config) *string { return &c.NATSInboxPrefix })},

	// The API's HTTPS.
	{name: "tls-cert-file", usage: "certificate (PEM) of the API's HTTPS listener; reloaded when the file changes (none: plain HTTP)", in: serverCommands,
		parser: str(func(c *Config) *string { return &c.TLSCertFile })},
	{name: "tls-key-file", usage: "key (PEM) of the API's HTTPS certificate", in: serverCommands,
		parser: str(func(c *Config) *string { return &c.TLSKeyFile })},
	{name: "tls-client-ca-file", usage: "CA bundle (PEM): the API requires client certificates it verifies (mutual TLS)", in: serverCommands,
		parser: str(func(c *Config) *string { return &c.TLSClientCAFile })},
	{name: "admin-tls", def: "false", usage: "true: the admin listener speaks HTTPS too, with the API's certificate (no client certificates asked)", in: serverCommands,
		parser: boolean("admin tls", func(c *Config) *bool { return &c.AdminTLS })},

	// Snapshots and rebuilds.
	{name: "snapshot-bucket", usage: "JetStream Object Store bucket of read model snapshots: written every --snapshot-interval and on POST /snapshot, restored into an empty data directory at start (none: off)", in: snapshotCommands | Erasure,
		per:    map[Commands]variant{Erasure: {usage: "JetStream Object Store bucket of read model snapshots, listed for the snapshots older than a deletion (none: not listed)"}},
		parser: str(func(c *Config) *string { return &c.SnapshotBucket })},
	{name: "snapshot-interval", def: "1h", usage: "interval between snapshots, once caught up, when --snapshot-bucket is set (0s: only on request)", in: snapshotCommands,
		parser: duration("snapshot interval", "a duration such as 1h, or 0s (only on request)", true, func(c *Config) *time.Duration { return &c.SnapshotInterval })},
	{name: "snapshot-keep", def: "3", usage: "snapshots of the stream kept in the bucket (older ones are deleted)", in: snapshotCommands,
		parser: atLeast("snapshot keep", 1, func(c *Config) *int { return &c.SnapshotKeep })},
	{name: "rebuild-on-mismatch", def: "false", usage: "true: a read model of another stream, or of an earlier incarnation of it, is rebuilt beside the old one at start-up instead of stopping serve", in: Serve,
		parser: boolean("rebuild on mismatch", func(c *Config) *bool { return &c.RebuildOnMismatch })},

	// Erasure (docs/operations.md, Erasure).
	{name: "erasure-delay", def: "24h", usage: "the bound: a deleted entity's earlier events, dead letters, older snapshots and the replicas' copies in their files are erased within it of the deletion's arrival in the stream", in: Serve,
		parser: duration("erasure delay", "a positive duration such as 24h", false, func(c *Config) *time.Duration { return &c.ErasureDelay })},
	{name: "erasure-bucket", def: "lookup-erasure", usage: "JetStream key-value bucket of the erasure: the lease of the one replica that erases, its cursor and the evidence", in: Serve | Erasure | AuditServe,
		parser: str(func(c *Config) *string { return &c.ErasureBucket })},
}
