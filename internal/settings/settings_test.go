package settings

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/projector"
)

// env returns a getenv over m.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// parseConfig returns the configuration of the command in for environ
// and args.
func parseConfig(in Commands, environ map[string]string, args ...string) (Config, error) {
	c, err := NewCommand(in, "test", "help", env(environ))
	if err != nil {
		return Config{}, err
	}
	err = c.Parse(args, io.Discard, io.Discard)
	return c.Config, err
}

func TestSettingPrecedence(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want Config
	}{
		{
			name: "defaults",
			want: Config{HTTPAddr: ":8080", AdminAddr: ":9090", NATSURL: "nats://127.0.0.1:4222", Stream: "PERSONS",
				DataDir: "./data", LogFormat: "json", LogLevel: "info", ShutdownTimeout: 10 * time.Second, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: AutoBudget, MaxPositionWait: 2 * time.Second, Security: Security{NATSInboxPrefix: "_INBOX_lookupd"},
				Operations: Operations{SnapshotInterval: time.Hour, SnapshotKeep: 3, ErasureDelay: 24 * time.Hour, ErasureBucket: "lookup-erasure"}},
		},
		{
			name: "environment over defaults",
			env: map[string]string{"LOOKUP_HTTP_ADDR": ":1", "LOOKUP_ADMIN_ADDR": ":2", "LOOKUP_NATS_URL": "nats://n:1",
				"LOOKUP_STREAM": "S", "LOOKUP_DATA_DIR": "/d", "LOOKUP_ENCRYPTION_KEY_FILE": "/k", "LOOKUP_JWKS_URL": "http://j",
				"LOOKUP_JWKS_FILE": "/j", "LOOKUP_ISSUER": "iss", "LOOKUP_AUDIENCE": "aud", "LOOKUP_TENANT_CLAIM": "tc",
				"LOOKUP_LOG_FORMAT": "text", "LOOKUP_LOG_LEVEL": "debug", "LOOKUP_SHUTDOWN_TIMEOUT": "3s",
				"LOOKUP_MEMORY_BUDGET": "64MiB", "LOOKUP_MAX_POSITION_WAIT": "500ms", "LOOKUP_MAX_STALENESS": "30s",
				"LOOKUP_SNAPSHOT_BUCKET": "SNAPS", "LOOKUP_SNAPSHOT_INTERVAL": "10m", "LOOKUP_SNAPSHOT_KEEP": "5", "LOOKUP_REBUILD_ON_MISMATCH": "true"},
			want: Config{HTTPAddr: ":1", AdminAddr: ":2", NATSURL: "nats://n:1", Stream: "S", DataDir: "/d",
				EncryptionKeyFile: "/k", JWKSURL: "http://j", JWKSFile: "/j", Issuer: "iss", Audience: "aud", TenantClaim: "tc",
				LogFormat: "text", LogLevel: "debug", ShutdownTimeout: 3 * time.Second, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: 64 << 20,
				MaxPositionWait: 500 * time.Millisecond, MaxStaleness: 30 * time.Second, Security: Security{NATSInboxPrefix: "_INBOX_lookupd"},
				Operations: Operations{SnapshotBucket: "SNAPS", SnapshotInterval: 10 * time.Minute, SnapshotKeep: 5, RebuildOnMismatch: true, ErasureDelay: 24 * time.Hour, ErasureBucket: "lookup-erasure"}},
		},
		{
			name: "flags over environment",
			env: map[string]string{"LOOKUP_HTTP_ADDR": ":1", "LOOKUP_STREAM": "S", "LOOKUP_LOG_FORMAT": "text", "LOOKUP_SHUTDOWN_TIMEOUT": "3s",
				"LOOKUP_MEMORY_BUDGET": "auto"},
			args: []string{"--http-addr", ":7", "--stream=T", "--log-format", "json", "--shutdown-timeout", "1m",
				"--admin-addr", ":8", "--nats-url", "nats://x:2", "--data-dir", "/e", "--encryption-key-file", "/l",
				"--jwks-url", "http://k", "--jwks-file", "/m", "--issuer", "i2", "--audience", "a2", "--tenant-claim", "t2",
				"--log-level", "warn", "--memory-budget", "1GiB"},
			want: Config{HTTPAddr: ":7", AdminAddr: ":8", NATSURL: "nats://x:2", Stream: "T", DataDir: "/e",
				EncryptionKeyFile: "/l", JWKSURL: "http://k", JWKSFile: "/m", Issuer: "i2", Audience: "a2", TenantClaim: "t2",
				LogFormat: "json", LogLevel: "warn", ShutdownTimeout: time.Minute, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: 1 << 30, MaxPositionWait: 2 * time.Second, Security: Security{NATSInboxPrefix: "_INBOX_lookupd"},
				Operations: Operations{SnapshotInterval: time.Hour, SnapshotKeep: 3, ErasureDelay: 24 * time.Hour, ErasureBucket: "lookup-erasure"}},
		},
		{
			name: "empty variable counts as unset",
			env:  map[string]string{"LOOKUP_STREAM": ""},
			want: Config{HTTPAddr: ":8080", AdminAddr: ":9090", NATSURL: "nats://127.0.0.1:4222", Stream: "PERSONS",
				DataDir: "./data", LogFormat: "json", LogLevel: "info", ShutdownTimeout: 10 * time.Second, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: AutoBudget, MaxPositionWait: 2 * time.Second, Security: Security{NATSInboxPrefix: "_INBOX_lookupd"},
				Operations: Operations{SnapshotInterval: time.Hour, SnapshotKeep: 3, ErasureDelay: 24 * time.Hour, ErasureBucket: "lookup-erasure"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(Serve, tt.env, tt.args...)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("config:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestMinMemoryBudget: the smallest budget SizeBudget sizes from a container
// is the smallest the read model and the accounting index open with.
func TestMinMemoryBudget(t *testing.T) {
	for _, store := range []struct {
		name string
		min  int64
	}{{"projector.MinMemoryBudget", projector.MinMemoryBudget}, {"accounting.MinMemoryBudget", accounting.MinMemoryBudget}} {
		if MinBudget != store.min {
			t.Errorf("MinBudget = %d, want %s %d", MinBudget, store.name, store.min)
		}
	}
}

// TestCommandDefaults: a command's own default applies when neither the
// variable nor the flag is given, and loses to both; another command
// keeps the table's default.
func TestCommandDefaults(t *testing.T) {
	tests := []struct {
		name    string
		in      Commands
		environ map[string]string
		args    []string
		want    string
	}{
		{"dev default", Dev, nil, nil, "text"},
		{"serve default", Serve, nil, nil, "json"},
		{"variable wins", Dev, map[string]string{"LOOKUP_LOG_FORMAT": "json"}, nil, "json"},
		{"flag wins", Dev, map[string]string{"LOOKUP_LOG_FORMAT": "text"}, []string{"--log-format", "json"}, "json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseConfig(tt.in, tt.environ, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			if cfg.LogFormat != tt.want {
				t.Errorf("LogFormat = %q, want %q", cfg.LogFormat, tt.want)
			}
		})
	}
}

// TestSettingsTable: every default of the table parses, for every command
// that reads it, and every row names a command and a variable of its own.
func TestSettingsTable(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range table {
		if s.in == 0 {
			t.Errorf("setting %s is read by no command", s.name)
		}
		if seen[envName(s.name)] {
			t.Errorf("variable %s twice in the table", envName(s.name))
		}
		seen[envName(s.name)] = true
		for in := range s.per {
			if s.in&in == 0 {
				t.Errorf("setting %s has a variant for a command that does not read it", s.name)
			}
		}
	}
	for _, c := range cmdNames {
		if _, err := NewCommand(c.in, c.name, "", env(nil)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestPProfSetting: LOOKUP_PPROF is off by default, on with true, and
// refuses anything but a boolean, in serve and in audit serve.
func TestPProfSetting(t *testing.T) {
	for _, cmd := range []struct {
		name string
		in   Commands
	}{{"serve", Serve}, {"audit serve", AuditServe}} {
		t.Run(cmd.name, func(t *testing.T) {
			if cfg, err := parseConfig(cmd.in, nil); err != nil || cfg.PProf {
				t.Errorf("pprof %v by default, err %v; want off", cfg.PProf, err)
			}
			if cfg, err := parseConfig(cmd.in, map[string]string{"LOOKUP_PPROF": "true"}); err != nil || !cfg.PProf {
				t.Errorf("LOOKUP_PPROF=true: pprof %v, err %v", cfg.PProf, err)
			}
			if _, err := parseConfig(cmd.in, map[string]string{"LOOKUP_PPROF": "yes please"}); !errors.Is(err, ErrUsage) {
				t.Errorf("LOOKUP_PPROF=yes please: err %v, want a usage error", err)
			}
		})
	}
}

// TestLogDurationUnits holds the documented units of durations in logs:
// nanoseconds in JSON, a Go duration string in text.
func TestLogDurationUnits(t *testing.T) {
	tests := []struct {
		format string
		d      time.Duration
		want   string
	}{
		{"json", 1520 * time.Microsecond, `"duration":1520000`},
		{"json", 10 * time.Second, `"duration":10000000000`},
		{"text", 1520 * time.Microsecond, `duration=1.52ms`},
		{"text", 10 * time.Second, `duration=10s`},
	}
	for _, tt := range tests {
		t.Run(tt.format+" "+tt.d.String(), func(t *testing.T) {
			var buf bytes.Buffer
			Config{LogFormat: tt.format, LogLevel: "info"}.Logger(&buf).Info("request", slog.Duration("duration", tt.d))
			if got := buf.String(); !strings.Contains(got, tt.want) {
				t.Errorf("log line %q, want %s", got, tt.want)
			}
		})
	}
}

// TestReplicaName: LOOKUP_REPLICA_ID, else the prefix and the host name.
func TestReplicaName(t *testing.T) {
	if got := (Config{ReplicaID: "r1"}).ReplicaName("accounting-"); got != "r1" {
		t.Errorf("ReplicaName with LOOKUP_REPLICA_ID r1 = %q, want r1", got)
	}
	if got := (Config{}).ReplicaName("accounting-"); !strings.HasPrefix(got, "accounting-") || got == "accounting-" {
		t.Errorf("ReplicaName without LOOKUP_REPLICA_ID = %q, want accounting- and the host name", got)
	}
}

// TestAuditServeRunsTheAuditDefault: lookupd audit serve offers no
// --audit, and runs with the table's default, required.
func TestAuditServeRunsTheAuditDefault(t *testing.T) {
	c, err := NewCommand(AuditServe, "audit serve", "", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.Config.Audit != "required" {
		t.Errorf("Config.Audit = %q, want required", c.Config.Audit)
	}
	if _, ok := c.Flags.GetFlag("audit"); ok {
		t.Error("audit serve offers --audit")
	}
}
