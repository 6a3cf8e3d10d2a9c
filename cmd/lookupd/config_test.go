package main

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
)

// parseConfig returns the configuration of the command in for environ
// and args.
func parseConfig(in settings.Commands, environ map[string]string, args ...string) (settings.Config, error) {
	c, err := settings.NewCommand(in, "test", "help", env(environ))
	if err != nil {
		return settings.Config{}, err
	}
	err = c.Parse(args, io.Discard, io.Discard)
	return c.Config, err
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
				var out, errOut testkit.LogBuffer
				if err := run(t.Context(), []string{tt.cmd, form}, env(nil), &out, &errOut); err != nil {
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
			var out, errOut testkit.LogBuffer
			if err := run(t.Context(), args, env(nil), &out, &errOut); err != nil {
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
			var out, errOut testkit.LogBuffer
			err := run(t.Context(), tt.args, env(tt.env), &out, &errOut)
			if !errors.Is(err, settings.ErrUsage) {
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
	var out, errOut testkit.LogBuffer
	if err := run(t.Context(), []string{"version"}, env(nil), &out, &errOut); err != nil {
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
		{"token", "LOOKUP_ISSUER", settings.DevIssuer},
		{"serve", "LOOKUP_TENANT_CLAIM", ""},
		{"dev", "LOOKUP_TENANT_CLAIM", ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd+" "+tt.env, func(t *testing.T) {
			var out, errOut testkit.LogBuffer
			args := append(strings.Fields(tt.cmd), "--help")
			if err := run(t.Context(), args, env(nil), &out, &errOut); err != nil {
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

// TestMissingSettings: serve without its required settings names all of
// them in one error, and each is a match for errors.Is (and so does audit
// serve: settings.Config.CheckTokenRules).
func TestMissingSettings(t *testing.T) {
	var out, errOut testkit.LogBuffer
	err := run(t.Context(), []string{"serve"}, env(map[string]string{"LOOKUP_DATA_DIR": t.TempDir()}), &out, &errOut)
	for _, want := range []error{settings.ErrNoJWKS, settings.ErrNoIssuer, settings.ErrNoAudience} {
		if !errors.Is(err, want) {
			t.Errorf("err = %v, want it to match %v", err, want)
		}
	}
	for _, v := range []string{"LOOKUP_JWKS_URL", "LOOKUP_JWKS_FILE", "LOOKUP_ISSUER", "LOOKUP_AUDIENCE"} {
		if err == nil || !strings.Contains(err.Error(), v) {
			t.Errorf("err = %v, want it to name %s", err, v)
		}
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
			tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
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
	cfg := settings.Config{JWKSURL: "http://idp.example/.well-known/jwks.json"}
	_, err := loadKeys(t.Context(), cfg, slog.New(slog.DiscardHandler))
	if !errors.Is(err, auth.ErrJWKSInsecureURL) || !strings.Contains(err.Error(), "LOOKUP_JWKS_ALLOW_HTTP=true") {
		t.Errorf("loadKeys = %v, want ErrJWKSInsecureURL naming LOOKUP_JWKS_ALLOW_HTTP=true", err)
	}
}

// TestREADME keeps the README and docs/ true to the code: the README's
// example ids are the dev mode's, its test command is the Makefile's and
// its command table names every command, and docs/operations.md documents
// the projector's metrics (the settings are in docs/configuration.md:
// TestConfigurationDoc).
func TestREADME(t *testing.T) {
	readme := testkit.ReadRepoFile(t, "README.md")
	d := testDemoData(t)
	for _, id := range regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).FindAllString(readme, -1) {
		if id != d.Consumer && id != d.BusinessContact && id != d.DeletedConsumer && id != d.Signer {
			t.Errorf("README example id %s is none of the dev banner's example ids", id)
		}
	}
	mk := testkit.ReadRepoFile(t, "Makefile")
	const testCmd = "go test -race -count=1 ./..."
	if !strings.Contains(readme, testCmd) || !strings.Contains(mk, "$(GO) test -race -count=1 ./...") {
		t.Errorf("README and Makefile disagree on the test command %q", testCmd)
	}
	for _, c := range commands {
		if !strings.Contains(readme, "`lookupd "+c.name) {
			t.Errorf("README does not describe lookupd %s", c.name)
		}
	}
	operations := testkit.ReadRepoFile(t, "docs/operations.md")
	for _, m := range []string{admin.MetricApplied, admin.MetricAppliedSeq, admin.MetricLag, admin.MetricAge} {
		if !strings.Contains(operations, "`"+m+"`") {
			t.Errorf("docs/operations.md does not document metric %s", m)
		}
	}
}
