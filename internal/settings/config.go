// Package settings is the configuration of lookupd: one table of every
// setting of every command (its flag, its LOOKUP_ variable, its default,
// its meaning, the commands that read it; table.go), each command's flags,
// environment and help made from it through peterbourgon/ff/v4
// (command.go), and the rules between settings: those a service cannot
// start without, named all at once, and those that go together
// (rules.go). It reads the environment only through the getenv it is
// given, and opens no file: cmd/lookupd wires what the settings name
// (docs/decisions/0023-settings-room.md).
//
// What the settings mean for the process is here too: the memory budget
// sized from LOOKUP_MEMORY_BUDGET or the container's limit, and Go's soft
// memory limit kept from it (memlimit.go, budget.go, cgroup.go). The key
// files the settings name are checked by internal/keyfile.
//
// Who imports it: cmd/lookupd. docs/configuration.md is generated from
// its table (go generate ./internal/settings).
package settings

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lookup/persons/internal/natsconn"
)

// The limits of the last steps of a shutdown (lifecycle.Config.After),
// the same for every command that serves: not settings anyone sets (no
// flag, no variable), but written here, beside the ones they follow
// (ShutdownDelay, ShutdownTimeout).
const (
	// LedgerFlushLimit bounds the flush of the audit ledger: its batches
	// in flight acknowledged or failed.
	LedgerFlushLimit = 10 * time.Second
	// InflightLimit bounds the wait for the API's handlers still running
	// once the listener is drained.
	InflightLimit = time.Minute
)

// Config is the configuration of every command. Each setting comes from a
// flag, else from its environment variable, else from its default: the flag
// wins over the environment, and an empty variable counts as unset. A
// command reads only the settings of the table that name it; the others
// stay zero.
type Config struct {
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
	AllowedClients    []string // LOOKUP_ALLOWED_CLIENTS: the token's azp, else client_id, one of these
	ScopeClaims       []string // LOOKUP_SCOPE_CLAIMS: the claims that grant scopes; nil = scope and scp
	TokenCacheSize    int
	JWKSAllowHTTP     bool
	LogFormat         string
	LogLevel          string
	ShutdownTimeout   time.Duration
	ShutdownDelay     time.Duration
	AdminTokenFile    string
	Audit             string // ledger.Mode
	AuditStream       string
	RequirePurpose    bool
	ReplicaID         string
	PProf             bool          // net/http/pprof on the admin listener
	MemoryBudget      int64         // bytes; 0: no budget; AutoBudget: from the container's limit
	MaxPositionWait   time.Duration // longest wait for Lookup-Min-Position
	MaxStaleness      time.Duration // staleness bound; 0: off
	Accounting
	Security
	Operations
}

// Security holds the settings of the NATS connection's security, the
// API's HTTPS and the token audience opt-out (docs/configuration.md).
type Security struct {
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

// NATSSecurity returns the natsconn.Security of c.
func (c Security) NATSSecurity() natsconn.Security {
	return natsconn.Security{CredsFile: c.NATSCreds, NkeyFile: c.NATSNkeyFile, User: c.NATSUser,
		PasswordFile: c.NATSPasswordFile, TokenFile: c.NATSTokenFile, CAFile: c.NATSCAFile,
		CertFile: c.NATSCertFile, KeyFile: c.NATSKeyFile}
}

// Accounting holds the settings of the accounting service (lookupd
// audit serve) and of lookupd audit's use of it.
type Accounting struct {
	AccountingDir       string // the accounting index's Badger directory
	AccountingURL       string // lookupd audit serve's URL; "": scan the stream
	AccountingTokenFile string // bearer token (scope read:audit) for AccountingURL
	ClientsFile         string // the clients registry (YAML); "": none
	PurposesFile        string // the purposes registry (YAML); "": none
	RegistriesStrict    bool   // refuse to start when the ledger holds codes the registries lack
	OfficerPageSize     int    // rows of a page of the officer's page
	// The letterhead of the officer's letters: the covered entity's name
	// and postal address (its lines), and the privacy officer's contact;
	// "" or none: not printed (LetterheadUnset).
	CoveredEntityName     string
	CoveredEntityAddress  []string
	PrivacyOfficerContact string
}

// Operations holds the settings of snapshots, rebuilds and erasure.
type Operations struct {
	SnapshotBucket    string        // JetStream Object Store bucket; "": no snapshots, no bootstrap
	SnapshotInterval  time.Duration // between snapshots; 0: only on request
	SnapshotKeep      int           // snapshots of the stream kept in the bucket
	RebuildOnMismatch bool          // rebuild a model of another stream instead of refusing to start
	ErasureDelay      time.Duration // the bound within which a deletion is erased everywhere
	ErasureBucket     string        // the erasure's key-value bucket
}

// ReplicaName is the name of this process in audit records and snapshots:
// LOOKUP_REPLICA_ID, else prefix and the host name.
func (c Config) ReplicaName(prefix string) string {
	if c.ReplicaID != "" {
		return c.ReplicaID
	}
	h, _ := os.Hostname()
	return prefix + h
}

// Logger returns a logger writing to w in the format and at the level of
// c (LOOKUP_LOG_FORMAT, LOOKUP_LOG_LEVEL).
func (c Config) Logger(w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel)) // validated by the setting
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	// Durations stay integers of nanoseconds in JSON (documented in the
	// README and docs/operations.md): a ReplaceAttr that rewrote them
	// would cost every log line, the access log's included, about 0.5 us
	// and two allocations.
	return slog.New(slog.NewJSONHandler(w, opts))
}
