package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/devkey"
	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/memlimit"
	"github.com/lookup/persons/internal/projectormetrics"
	"github.com/lookup/persons/internal/repofile"
	"github.com/lookup/persons/projector"
	"github.com/lookup/persons/query"
)

// parseConfig returns the configuration of the command in for environ
// and args.
func parseConfig(in cmdSet, environ map[string]string, args ...string) (config, error) {
	c, err := newCommand(in, "test", "help", env(environ))
	if err != nil {
		return config{}, err
	}
	err = c.parse(args, io.Discard, io.Discard)
	return c.cfg, err
}

func TestSettingPrecedence(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want config
	}{
		{
			name: "defaults",
			want: config{HTTPAddr: ":8080", AdminAddr: ":9090", NATSURL: "nats://127.0.0.1:4222", Stream: "PERSONS",
				DataDir: "./data", LogFormat: "json", LogLevel: "info", ShutdownTimeout: 10 * time.Second, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: memlimit.Auto, MaxPositionWait: 2 * time.Second, securityConfig: securityConfig{NATSInboxPrefix: "_INBOX_lookupd"},
				operationsConfig: operationsConfig{SnapshotInterval: time.Hour, SnapshotKeep: 3}},
		},
		{
			name: "environment over defaults",
			env: map[string]string{"LOOKUP_HTTP_ADDR": ":1", "LOOKUP_ADMIN_ADDR": ":2", "LOOKUP_NATS_URL": "nats://n:1",
				"LOOKUP_STREAM": "S", "LOOKUP_DATA_DIR": "/d", "LOOKUP_ENCRYPTION_KEY_FILE": "/k", "LOOKUP_JWKS_URL": "http://j",
				"LOOKUP_JWKS_FILE": "/j", "LOOKUP_ISSUER": "iss", "LOOKUP_AUDIENCE": "aud", "LOOKUP_TENANT_CLAIM": "tc",
				"LOOKUP_LOG_FORMAT": "text", "LOOKUP_LOG_LEVEL": "debug", "LOOKUP_SHUTDOWN_TIMEOUT": "3s",
				"LOOKUP_MEMORY_BUDGET": "64MiB", "LOOKUP_MAX_POSITION_WAIT": "500ms", "LOOKUP_MAX_STALENESS": "30s",
				"LOOKUP_SNAPSHOT_BUCKET": "SNAPS", "LOOKUP_SNAPSHOT_INTERVAL": "10m", "LOOKUP_SNAPSHOT_KEEP": "5", "LOOKUP_REBUILD_ON_MISMATCH": "true"},
			want: config{HTTPAddr: ":1", AdminAddr: ":2", NATSURL: "nats://n:1", Stream: "S", DataDir: "/d",
				EncryptionKeyFile: "/k", JWKSURL: "http://j", JWKSFile: "/j", Issuer: "iss", Audience: "aud", TenantClaim: "tc",
				LogFormat: "text", LogLevel: "debug", ShutdownTimeout: 3 * time.Second, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: 64 << 20,
				MaxPositionWait: 500 * time.Millisecond, MaxStaleness: 30 * time.Second, securityConfig: securityConfig{NATSInboxPrefix: "_INBOX_lookupd"},
				operationsConfig: operationsConfig{SnapshotBucket: "SNAPS", SnapshotInterval: 10 * time.Minute, SnapshotKeep: 5, RebuildOnMismatch: true}},
		},
		{
			name: "flags over environment",
			env: map[string]string{"LOOKUP_HTTP_ADDR": ":1", "LOOKUP_STREAM": "S", "LOOKUP_LOG_FORMAT": "text", "LOOKUP_SHUTDOWN_TIMEOUT": "3s",
				"LOOKUP_MEMORY_BUDGET": "auto"},
			args: []string{"--http-addr", ":7", "--stream=T", "--log-format", "json", "--shutdown-timeout", "1m",
				"--admin-addr", ":8", "--nats-url", "nats://x:2", "--data-dir", "/e", "--encryption-key-file", "/l",
				"--jwks-url", "http://k", "--jwks-file", "/m", "--issuer", "i2", "--audience", "a2", "--tenant-claim", "t2",
				"--log-level", "warn", "--memory-budget", "1GiB"},
			want: config{HTTPAddr: ":7", AdminAddr: ":8", NATSURL: "nats://x:2", Stream: "T", DataDir: "/e",
				EncryptionKeyFile: "/l", JWKSURL: "http://k", JWKSFile: "/m", Issuer: "i2", Audience: "a2", TenantClaim: "t2",
				LogFormat: "json", LogLevel: "warn", ShutdownTimeout: time.Minute, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: 1 << 30, MaxPositionWait: 2 * time.Second, securityConfig: securityConfig{NATSInboxPrefix: "_INBOX_lookupd"},
				operationsConfig: operationsConfig{SnapshotInterval: time.Hour, SnapshotKeep: 3}},
		},
		{
			name: "empty variable counts as unset",
			env:  map[string]string{"LOOKUP_STREAM": ""},
			want: config{HTTPAddr: ":8080", AdminAddr: ":9090", NATSURL: "nats://127.0.0.1:4222", Stream: "PERSONS",
				DataDir: "./data", LogFormat: "json", LogLevel: "info", ShutdownTimeout: 10 * time.Second, TokenCacheSize: 10000,
				Audit: "required", AuditStream: "PERSONS_AUDIT", MemoryBudget: memlimit.Auto, MaxPositionWait: 2 * time.Second, securityConfig: securityConfig{NATSInboxPrefix: "_INBOX_lookupd"},
				operationsConfig: operationsConfig{SnapshotInterval: time.Hour, SnapshotKeep: 3}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(inServe, tt.env, tt.args...)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			if got != tt.want {
				t.Errorf("config:\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestMinMemoryBudget: the smallest budget memlimit sizes from a container
// is the smallest the read model and the accounting index open with.
func TestMinMemoryBudget(t *testing.T) {
	for _, store := range []struct {
		name string
		min  int64
	}{{"projector.MinMemoryBudget", projector.MinMemoryBudget}, {"accounting.MinMemoryBudget", accounting.MinMemoryBudget}} {
		if memlimit.MinBudget != store.min {
			t.Errorf("memlimit.MinBudget = %d, want %s %d", memlimit.MinBudget, store.name, store.min)
		}
	}
}

func TestHelpListsFlagsAndEnvironment(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string // flags and variables the help must name
	}{
		{"serve", []string{"--http-addr", "--admin-addr", "--nats-url", "--stream", "--data-dir", "--encryption-key-file",
			"--jwks-url", "--jwks-file", "--issuer", "--audience", "--tenant-claim", "--log-format", "--log-level",
			"--shutdown-timeout", "LOOKUP_HTTP_ADDR", "LOOKUP_ADMIN_ADDR", "LOOKUP_NATS_URL", "LOOKUP_STREAM",
			"LOOKUP_DATA_DIR", "LOOKUP_ENCRYPTION_KEY_FILE", "LOOKUP_JWKS_URL", "LOOKUP_JWKS_FILE", "LOOKUP_ISSUER",
			"LOOKUP_AUDIENCE", "LOOKUP_TENANT_CLAIM", "LOOKUP_LOG_FORMAT", "LOOKUP_LOG_LEVEL", "LOOKUP_SHUTDOWN_TIMEOUT",
			":8080", ":9090", "nats://127.0.0.1:4222", "PERSONS", "./data"}},
		{"project", []string{"--until-caught-up", "--progress-interval", "--nats-url", "--stream", "--data-dir",
			"--encryption-key-file", "LOOKUP_NATS_URL", "LOOKUP_STREAM", "LOOKUP_DATA_DIR", "LOOKUP_ENCRYPTION_KEY_FILE",
			"LOOKUP_LOG_FORMAT", "LOOKUP_LOG_LEVEL"}},
		{"dev", []string{"--data-dir", "--token-ttl", "--http-addr", "--admin-addr", "LOOKUP_HTTP_ADDR",
			"LOOKUP_ADMIN_ADDR", "LOOKUP_STREAM", "LOOKUP_ISSUER", "LOOKUP_AUDIENCE", "LOOKUP_TENANT_CLAIM"}},
		{"token", []string{"--key", "--scope", "--ttl", "--sub", "--tenant", "--print-jwks", "--issuer", "--audience",
			"--tenant-claim", "LOOKUP_ISSUER", "LOOKUP_AUDIENCE", "LOOKUP_TENANT_CLAIM", "LOOKUP_DATA_DIR"}},
		{"version", []string{"--help"}},
	}
	for _, tt := range tests {
		for _, form := range []string{"--help", "-h"} {
			t.Run(tt.cmd+" "+form, func(t *testing.T) {
				var out, errOut logtest.Buffer
				if err := run(context.Background(), []string{tt.cmd, form}, env(nil), &out, &errOut); err != nil {
					t.Fatalf("run: %v", err)
				}
				help := out.String()
				if !strings.HasPrefix(help, "USAGE\n  lookupd "+tt.cmd) {
					t.Errorf("help does not start with the usage line:\n%s", help)
				}
				for _, w := range tt.want {
					if !strings.Contains(help, w) {
						t.Errorf("help lacks %q:\n%s", w, help)
					}
				}
				if errOut.String() != "" {
					t.Errorf("stderr: %q, want nothing", errOut.String())
				}
			})
		}
	}
}

func TestTopLevelHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut logtest.Buffer
			if err := run(context.Background(), args, env(nil), &out, &errOut); err != nil {
				t.Fatalf("run: %v", err)
			}
			for _, c := range []string{"serve", "project", "dev", "token", "version"} {
				if !strings.Contains(out.String(), "  "+c+" ") {
					t.Errorf("help lacks command %q:\n%s", c, out.String())
				}
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
	}{
		{"no command", nil, nil, "no command"},
		{"unknown command", []string{"frobnicate"}, nil, `unknown command "frobnicate"`},
		{"unknown flag", []string{"serve", "--no-such-flag"}, nil, "no-such-flag"},
		{"stray argument", []string{"serve", "extra"}, nil, `unexpected argument "extra"`},
		{"bad log format flag", []string{"serve", "--log-format", "xml"}, nil, "log format"},
		{"bad log level env", []string{"serve"}, map[string]string{"LOOKUP_LOG_LEVEL": "loud"}, "LOOKUP_LOG_LEVEL"},
		{"bad shutdown timeout", []string{"serve", "--shutdown-timeout", "-1s"}, nil, "shutdown timeout"},
		{"zero shutdown timeout", []string{"serve", "--shutdown-timeout", "0s"}, nil, "want a positive duration"},
		{"negative shutdown delay", []string{"serve"}, map[string]string{"LOOKUP_SHUTDOWN_DELAY": "-1s"}, "LOOKUP_SHUTDOWN_DELAY"},
		{"bad require purpose", []string{"serve"}, map[string]string{"LOOKUP_REQUIRE_PURPOSE": "maybe"}, "want true or false"},
		{"bad memory budget", []string{"serve", "--memory-budget", "lots"}, nil, "memory budget"},
		{"memory budget too small", []string{"project"}, map[string]string{"LOOKUP_MEMORY_BUDGET": "8MiB"}, "at least 32MiB"},
		{"bad max position wait", []string{"serve", "--max-position-wait", "0s"}, nil, "max position wait"},
		{"bad max staleness", []string{"serve"}, map[string]string{"LOOKUP_MAX_STALENESS": "-1s"}, "LOOKUP_MAX_STALENESS"},
		{"bad token ttl", []string{"token", "--ttl", "0s"}, nil, "--ttl"},
		{"bad tenant", []string{"token", "--tenant", "not-a-uuid"}, nil, "--tenant"},
		{"bad progress interval", []string{"project", "--progress-interval", "0s"}, nil, "--progress-interval"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut logtest.Buffer
			err := run(context.Background(), tt.args, env(tt.env), &out, &errOut)
			if !errors.Is(err, errUsage) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %q, want it to mention %q", err, tt.wantErr)
			}
			if out.String() != "" {
				t.Errorf("stdout = %q, want nothing", out.String())
			}
		})
	}
}

func TestVersion(t *testing.T) {
	var out, errOut logtest.Buffer
	if err := run(context.Background(), []string{"version"}, env(nil), &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "lookupd "+version+" (go") {
		t.Errorf("version output %q", got)
	}
}

// TestHelpDefaults: the help of each command states, on the line of each
// setting, the default that command uses ("" for none).
func TestHelpDefaults(t *testing.T) {
	tests := []struct{ cmd, env, want string }{
		{"dev", "LOOKUP_LOG_FORMAT", "text"},
		{"serve", "LOOKUP_LOG_FORMAT", "json"},
		{"project", "LOOKUP_LOG_FORMAT", "json"},
		{"dlq ls", "LOOKUP_LOG_LEVEL", "warn"},
		{"token", "LOOKUP_TENANT_CLAIM", "business_ids"},
		{"token", "LOOKUP_ISSUER", devIssuer},
		{"serve", "LOOKUP_TENANT_CLAIM", ""},
		{"dev", "LOOKUP_TENANT_CLAIM", ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+tt.env, func(t *testing.T) {
			var out, errOut logtest.Buffer
			args := append(strings.Fields(tt.cmd), "--help")
			if err := run(context.Background(), args, env(nil), &out, &errOut); err != nil {
				t.Fatalf("run: %v", err)
			}
			help := out.String()
			m := regexp.MustCompile(`(?m)\(env ` + tt.env + `\)(?: \(default: (\S+)\))?$`).FindStringSubmatch(help)
			if m == nil || m[1] != tt.want {
				t.Errorf("%s default in help = %q, want %q:\n%s", tt.env, m, tt.want, help)
			}
		})
	}
}

// TestCommandDefaults: a command's own default applies when neither the
// variable nor the flag is given, and loses to both; another command
// keeps the table's default.
func TestCommandDefaults(t *testing.T) {
	tests := []struct {
		name    string
		in      cmdSet
		environ map[string]string
		args    []string
		want    string
	}{
		{"dev default", inDev, nil, nil, "text"},
		{"serve default", inServe, nil, nil, "json"},
		{"variable wins", inDev, map[string]string{"LOOKUP_LOG_FORMAT": "json"}, nil, "json"},
		{"flag wins", inDev, map[string]string{"LOOKUP_LOG_FORMAT": "text"}, []string{"--log-format", "json"}, "json"},
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
	for _, s := range settings {
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
		if _, err := newCommand(c.in, c.name, "", env(nil)); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestMissingSettings: serve without its required settings names all of
// them in one error, and each is a match for errors.Is.
func TestMissingSettings(t *testing.T) {
	var out, errOut logtest.Buffer
	err := run(context.Background(), []string{"serve"}, env(map[string]string{"LOOKUP_DATA_DIR": t.TempDir()}), &out, &errOut)
	for _, want := range []error{errNoJWKS, errNoIssuer, errNoAudience} {
		if !errors.Is(err, want) {
			t.Errorf("err = %v, want it to match %v", err, want)
		}
	}
	for _, v := range []string{"LOOKUP_JWKS_URL", "LOOKUP_JWKS_FILE", "LOOKUP_ISSUER", "LOOKUP_AUDIENCE"} {
		if err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("err = %v, want it to name %s", err, v)
		}
	}
	if got := missingSettings(config{JWKSFile: "f", Issuer: "i", securityConfig: securityConfig{AllowNoAudience: true}}); got != nil {
		t.Errorf("missingSettings with all set = %v, want nil", got)
	}
}

// TestServeTokenCacheSetting: LOOKUP_TOKEN_CACHE_SIZE reaches the API:
// with the default a token presented again is a cache hit on /metrics; with
// 0 there is no hit.
func TestServeTokenCacheSetting(t *testing.T) {
	ns, _, c := oneConsumerNATS(t)
	tests := []struct {
		name     string
		size     string // "" = default
		wantHits string
	}{
		{"default", "", "2"},
		{"off", "0", "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := serveEnv(t, ns, t.TempDir())
			environ["LOOKUP_TOKEN_CACHE_SIZE"] = tc.size
			p := start(t, environ, "serve")
			addrs := p.addrs(t)
			waitReady(t, addrs["admin"])
			tok := token(t, devkey.TokenRequest{Issuer: testIssuer, Audience: testAudience})
			for i := 0; i < 3; i++ {
				if code, body, err := get("http://"+addrs["api"]+"/api/v1/persons/"+c.ConsumerID, tok); err != nil || code != http.StatusOK {
					t.Fatalf("GET person: %d %s %v", code, body, err)
				}
			}
			_, metrics, err := get("http://"+addrs["admin"]+"/metrics", "")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?m)^lookup_token_cache_hits_total (\S+)$`).FindSubmatch(metrics)
			if m == nil || string(m[1]) != tc.wantHits {
				t.Errorf("lookup_token_cache_hits_total = %q, want %s", m, tc.wantHits)
			}
		})
	}
}

// TestPlainHTTPJWKSURLRefused: a plain http:// JWKS URL to a host that is
// not loopback is a start-up error naming the opt-out.
func TestPlainHTTPJWKSURLRefused(t *testing.T) {
	cfg := config{JWKSURL: "http://idp.example/.well-known/jwks.json"}
	_, err := loadKeys(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if !errors.Is(err, query.ErrJWKSInsecureURL) || !strings.Contains(err.Error(), "LOOKUP_JWKS_ALLOW_HTTP=true") {
		t.Errorf("loadKeys = %v, want ErrJWKSInsecureURL naming LOOKUP_JWKS_ALLOW_HTTP=true", err)
	}
}

// TestREADME keeps the README and docs/ true to the code: the README's
// example ids are the dev mode's, its test command is the Makefile's and
// its command table names every command, and docs/operations.md documents
// the projector's metrics (the settings are in docs/configuration.md:
// TestConfigurationDoc).
func TestREADME(t *testing.T) {
	readme := repofile.Read(t, "README.md")
	d := testDemoData(t)
	for _, id := range regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).FindAllString(readme, -1) {
		if id != d.Consumer && id != d.BusinessContact && id != d.DeletedConsumer && id != d.Signer {
			t.Errorf("README example id %s is none of the dev banner's example ids", id)
		}
	}
	mk := repofile.Read(t, "Makefile")
	const testCmd = "go test -race -count=1 ./..."
	if !strings.Contains(readme, testCmd) || !strings.Contains(mk, "$(GO) test -race -count=1 ./...") {
		t.Errorf("README and Makefile disagree on the test command %q", testCmd)
	}
	for _, c := range commands {
		if !strings.Contains(readme, "`lookupd "+c.name) {
			t.Errorf("README does not describe lookupd %s", c.name)
		}
	}
	operations := repofile.Read(t, "docs/operations.md")
	for _, m := range []string{projectormetrics.MetricApplied, projectormetrics.MetricAppliedSeq, projectormetrics.MetricLag, projectormetrics.MetricAge} {
		if !strings.Contains(operations, "`"+m+"`") {
			t.Errorf("docs/operations.md does not document metric %s", m)
		}
	}
}
