package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/lookup/persons/projector"
)

// config is the configuration of every command. Each setting comes from a
// flag, else from its environment variable, else from its default: the flag
// wins over the environment.
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
	MemoryBudget      int64         // bytes; 0: no budget
	MaxPositionWait   time.Duration // longest wait for Lookup-Min-Position
	MaxStaleness      time.Duration // staleness bound; 0: off
	securityConfig
	operationsConfig
}

// setting is one configuration value: its flag, its environment variable,
// its default and where it goes in config.
type setting struct {
	flag  string
	env   string
	def   string
	usage string
	// set stores a value (from the environment or a flag) into c.
	set func(c *config, v string) error
}

// str is the parse function of a setting that is any string, set through
// dst.
func str(dst func(c *config) *string) func(c *config, v string) error {
	return func(c *config, v string) error { *dst(c) = v; return nil }
}

// boolean is the parse function of a setting that is true or false, set
// through dst; what names the setting in errors.
func boolean(what string, dst func(c *config) *bool) func(c *config, v string) error {
	return func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("%s %q: want true or false", what, v)
		}
		*dst(c) = b
		return nil
	}
}

// atLeast is the parse function of a setting that is a whole number of
// at least least, set through dst; what names the setting in errors.
func atLeast(what string, least int, dst func(c *config) *int) func(c *config, v string) error {
	return func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < least {
			return fmt.Errorf("%s %q: want a whole number, %d or more", what, v, least)
		}
		*dst(c) = n
		return nil
	}
}

// duration is the parse function of a duration setting set through dst:
// positive, or 0 too when zeroOK; what names the setting and want says
// what is wanted in errors.
func duration(what, want string, zeroOK bool, dst func(c *config) *time.Duration) func(c *config, v string) error {
	return func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || (d == 0 && !zeroOK) {
			return fmt.Errorf("%s %q: want %s", what, v, want)
		}
		*dst(c) = d
		return nil
	}
}

// settings is the table of docs/operations.md, plus the logging and
// shutdown settings. Help output and the README are generated from it.
var settings = []setting{
	{"http-addr", "LOOKUP_HTTP_ADDR", ":8080", "API listener address",
		str(func(c *config) *string { return &c.HTTPAddr })},
	{"admin-addr", "LOOKUP_ADMIN_ADDR", ":9090", "admin listener address (/livez, /readyz, /metrics)",
		str(func(c *config) *string { return &c.AdminAddr })},
	{"nats-url", "LOOKUP_NATS_URL", "nats://127.0.0.1:4222", "NATS JetStream server URL(s), comma-separated",
		str(func(c *config) *string { return &c.NATSURL })},
	{"stream", "LOOKUP_STREAM", "PERSONS", "source JetStream stream",
		str(func(c *config) *string { return &c.Stream })},
	{"data-dir", "LOOKUP_DATA_DIR", "./data", "Badger read model directory",
		str(func(c *config) *string { return &c.DataDir })},
	{"encryption-key-file", "LOOKUP_ENCRYPTION_KEY_FILE", "", "AES key file for encryption at rest of the read model (none: unencrypted)",
		str(func(c *config) *string { return &c.EncryptionKeyFile })},
	{"jwks-url", "LOOKUP_JWKS_URL", "", "URL of the JWKS that verifies tokens (cached, refreshed)",
		str(func(c *config) *string { return &c.JWKSURL })},
	{"jwks-file", "LOOKUP_JWKS_FILE", "", "file holding the JWKS that verifies tokens",
		str(func(c *config) *string { return &c.JWKSFile })},
	{"issuer", "LOOKUP_ISSUER", "", "required token iss (serve refuses to start without it)",
		str(func(c *config) *string { return &c.Issuer })},
	{"audience", "LOOKUP_AUDIENCE", "", "required token aud (serve refuses to start without it unless --allow-no-audience)",
		str(func(c *config) *string { return &c.Audience })},
	{"tenant-claim", "LOOKUP_TENANT_CLAIM", "", "token claim listing the caller's business ids; enables tenancy checks",
		str(func(c *config) *string { return &c.TenantClaim })},
	{"token-cache-size", "LOOKUP_TOKEN_CACHE_SIZE", "10000", "verified tokens remembered, so a token presented again is not verified afresh (0: off)",
		atLeast("token cache size", 0, func(c *config) *int { return &c.TokenCacheSize })},
	{"jwks-allow-http", "LOOKUP_JWKS_ALLOW_HTTP", "false", "allow a plain http:// JWKS URL to a host that is not loopback",
		boolean("jwks allow http", func(c *config) *bool { return &c.JWKSAllowHTTP })},
	{"log-format", "LOOKUP_LOG_FORMAT", "json", "log format: json or text",
		func(c *config, v string) error {
			if v != "json" && v != "text" {
				return fmt.Errorf("log format %q: want json or text", v)
			}
			c.LogFormat = v
			return nil
		}},
	{"log-level", "LOOKUP_LOG_LEVEL", "info", "log level: debug, info, warn or error",
		func(c *config, v string) error {
			var l slog.Level
			if err := l.UnmarshalText([]byte(v)); err != nil {
				return fmt.Errorf("log level %q: want debug, info, warn or error", v)
			}
			c.LogLevel = v
			return nil
		}},
	{"memory-budget", "LOOKUP_MEMORY_BUDGET", "192MiB", "memory the process is sized for: Badger's memtables, caches and value log, and Go's soft memory limit (0: Badger's defaults, no limit)",
		func(c *config, v string) error {
			n, err := humanize.ParseBytes(v)
			switch {
			case err != nil:
				return fmt.Errorf("memory budget %q: want a size such as 192MiB or 1GiB", v)
			case n != 0 && n < projector.MinMemoryBudget:
				return fmt.Errorf("memory budget %q: want 0 or at least 32MiB", v)
			case n > 1<<50:
				return fmt.Errorf("memory budget %q: too large", v)
			}
			c.MemoryBudget = int64(n)
			return nil
		}},
	{"shutdown-timeout", "LOOKUP_SHUTDOWN_TIMEOUT", "10s", "how long a shutdown waits for in-flight requests",
		duration("shutdown timeout", "a positive duration such as 10s", false, func(c *config) *time.Duration { return &c.ShutdownTimeout })},
	{"shutdown-delay", "LOOKUP_SHUTDOWN_DELAY", "0s", "how long a shutdown keeps serving, not ready, before it stops accepting requests (load balancers update)",
		duration("shutdown delay", "a duration such as 5s, or 0s", true, func(c *config) *time.Duration { return &c.ShutdownDelay })},
	{"admin-token-file", "LOOKUP_ADMIN_TOKEN_FILE", "", "file holding the bearer token of the state-changing admin endpoints (none: they are off)",
		str(func(c *config) *string { return &c.AdminTokenFile })},
	{"audit", "LOOKUP_AUDIT", "required", "audit ledger of disclosures of protected data: required (no disclosure unless recorded), best-effort or off",
		func(c *config, v string) error {
			if v != "required" && v != "best-effort" && v != "off" {
				return fmt.Errorf("audit %q: want required, best-effort or off", v)
			}
			c.Audit = v
			return nil
		}},
	{"audit-stream", "LOOKUP_AUDIT_STREAM", "PERSONS_AUDIT", "JetStream stream of the audit ledger (created when missing)",
		str(func(c *config) *string { return &c.AuditStream })},
	{"require-purpose", "LOOKUP_REQUIRE_PURPOSE", "false", "require the Lookup-Purpose header on requests for protected data",
		boolean("require purpose", func(c *config) *bool { return &c.RequirePurpose })},
	{"replica-id", "LOOKUP_REPLICA_ID", "", "name of this replica in audit records (none: the host name)",
		str(func(c *config) *string { return &c.ReplicaID })},
	{"pprof", "LOOKUP_PPROF", "false", "serve net/http/pprof under /debug/pprof/ on the admin listener: true or false",
		boolean("pprof", func(c *config) *bool { return &c.PProf })},
	{"max-position-wait", "LOOKUP_MAX_POSITION_WAIT", "2s", "longest wait of a request for its Lookup-Min-Position before a 503 position-not-reached",
		duration("max position wait", "a positive duration such as 2s", false, func(c *config) *time.Duration { return &c.MaxPositionWait })},
	{"max-staleness", "LOOKUP_MAX_STALENESS", "0s", "staleness bound: not ready, and API answers 503 stale, while the oldest unapplied event or the loss of the stream is older (0s: off)",
		duration("max staleness", "a duration such as 30s, or 0s (off)", true, func(c *config) *time.Duration { return &c.MaxStaleness })},
}

// allSettings returns every setting: the table above, then the security
// settings (securitysettings.go) and those of operations (opssettings.go).
func allSettings() []setting {
	return append(append(append([]setting(nil), settings...), securitySettings...), operationsSettings...)
}

// settingsFor returns the settings named by flag, in the order of the
// settings table.
func settingsFor(flags ...string) []setting {
	want := make(map[string]bool, len(flags))
	for _, f := range flags {
		want[f] = true
	}
	var out []setting
	for _, s := range allSettings() {
		if want[s.flag] {
			out = append(out, s)
			delete(want, s.flag)
		}
	}
	if len(want) != 0 {
		panic(fmt.Sprintf("settingsFor: unknown settings %v", want))
	}
	return out
}

// errUsage marks an error in the command line or the environment: the
// program prints the usage and exits with status 2.
var errUsage = errors.New("usage")

type usageError struct{ err error }

func (e *usageError) Error() string        { return e.err.Error() }
func (e *usageError) Is(target error) bool { return target == errUsage }
func (e *usageError) Unwrap() error        { return e.err }

// command is one sub-command of lookupd with its flag set.
type command struct {
	name     string
	help     string // paragraph for the command's --help
	settings []setting
	fs       *flag.FlagSet
	cfg      config
	// extra holds the names of command-specific flags, in the order they
	// are listed in the help.
	extra []string
	// extraEnv documents command-specific variables in the help.
	extraEnv [][3]string // name, default, meaning
	// defaults are the defaults of this command that differ from the
	// settings table, by flag, as its help shows them.
	defaults map[string]string
	getenv   func(string) string
	// positive are the command-specific duration flags that parse
	// refuses unless positive.
	positive []string
}

// newCommand returns a command whose flag set holds its settings, with
// defaults taken from the environment (through getenv) when set.
func newCommand(name, help string, getenv func(string) string, flags ...string) (*command, error) {
	c := &command{name: name, help: help, settings: settingsFor(flags...),
		defaults: map[string]string{}, getenv: getenv}
	c.fs = flag.NewFlagSet("lookupd "+name, flag.ContinueOnError)
	c.fs.SetOutput(io.Discard)
	for _, s := range c.settings {
		if err := s.set(&c.cfg, s.def); err != nil {
			panic(fmt.Sprintf("default of %s: %v", s.flag, err))
		}
		if v, ok := lookupEnv(getenv, s.env); ok {
			if err := s.set(&c.cfg, v); err != nil {
				return nil, &usageError{fmt.Errorf("%s: %w", s.env, err)}
			}
		}
		c.fs.Func(s.flag, s.usage, func(v string) error { return s.set(&c.cfg, v) })
	}
	return c, nil
}

// lookupEnv reports the value of the variable name and whether it is set
// to a non-empty value (an empty variable counts as unset).
func lookupEnv(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// setDefault makes def the default of the setting flag for this command:
// the value used when neither the variable nor the flag is given, and the
// default its help shows. Call it before parse.
func (c *command) setDefault(flag, def string) {
	for _, s := range c.settings {
		if s.flag != flag {
			continue
		}
		if _, ok := lookupEnv(c.getenv, s.env); !ok {
			if err := s.set(&c.cfg, def); err != nil {
				panic(fmt.Sprintf("default of %s for %s: %v", flag, c.name, err))
			}
		}
		c.defaults[flag] = def
		return
	}
	panic(fmt.Sprintf("setDefault: %s has no setting %s", c.name, flag))
}

// showDefault makes the help show def as the default of the setting flag,
// for a command that applies the default itself (in its own logic).
func (c *command) showDefault(flag, def string) {
	c.defaults[flag] = def
}

// defaultOf returns the default of setting s for this command.
func (c *command) defaultOf(s setting) string {
	if d, ok := c.defaults[s.flag]; ok {
		return d
	}
	return s.def
}

// setUsage replaces the help text of the setting or flag name, for a
// command where it means something more specific.
func (c *command) setUsage(name, usage string) {
	c.fs.Lookup(name).Usage = usage
}

// parse parses args. It returns flag.ErrHelp after printing the help to
// stdout when asked for it, and a usage error (after printing the usage to
// stderr) for a bad flag or a stray argument.
func (c *command) parse(args []string, stdout, stderr io.Writer) error {
	if err := c.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.usage(stdout)
			return flag.ErrHelp
		}
		return c.refuse(stderr, err)
	}
	if c.fs.NArg() > 0 {
		return c.refuse(stderr, fmt.Errorf("lookupd %s: unexpected argument %q", c.name, c.fs.Arg(0)))
	}
	for _, name := range c.positive {
		if d := c.fs.Lookup(name).Value.(flag.Getter).Get().(time.Duration); d <= 0 {
			return c.refuse(stderr, fmt.Errorf("--%s %v: want a positive duration", name, d))
		}
	}
	return nil
}

// positiveDuration defines a command-specific duration flag that parse
// refuses (a usage error) unless it is positive.
func (c *command) positiveDuration(name string, def time.Duration, usage string) *time.Duration {
	c.positive = append(c.positive, name)
	return c.fs.Duration(name, def, usage)
}

// refuse writes the usage of the command to w and returns err as a usage
// error (exit status 2).
func (c *command) refuse(w io.Writer, err error) error {
	c.usage(w)
	return &usageError{err}
}

// usage writes the help of the command: what it does, its flags, and the
// environment variables it reads.
func (c *command) usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: lookupd %s [flags]\n\n%s\n\nFlags:\n", c.name, strings.TrimSpace(c.help))
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	envOf := map[string]setting{}
	for _, s := range c.settings {
		envOf[s.flag] = s
	}
	var names []string
	c.fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	order := map[string]int{}
	for i, s := range c.settings {
		order[s.flag] = i
	}
	for i, e := range c.extra {
		order[e] = len(c.settings) + i
	}
	sort.SliceStable(names, func(i, j int) bool { return order[names[i]] < order[names[j]] })
	for _, n := range names {
		f := c.fs.Lookup(n)
		if s, ok := envOf[n]; ok {
			fmt.Fprintf(tw, "  --%s\t%s (env %s)\n", n, f.Usage, s.env)
			continue
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(tw, "  --%s\t%s%s\n", n, f.Usage, def)
	}
	fmt.Fprintf(tw, "  -h, --help\tshow this help\n")
	tw.Flush()
	if len(c.settings)+len(c.extraEnv) == 0 {
		return
	}
	fmt.Fprintf(w, "\nEnvironment (a flag wins over its variable):\n")
	tw = tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "  VARIABLE\tDEFAULT\tMEANING\n")
	for _, s := range c.settings {
		def := c.defaultOf(s)
		if def == "" {
			def = "(none)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.env, def, c.fs.Lookup(s.flag).Usage)
	}
	for _, e := range c.extraEnv {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", e[0], e[1], e[2])
	}
	tw.Flush()
}
