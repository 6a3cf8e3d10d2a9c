package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestConnectNATSRefusedNamesSettings: a server that refuses lookupd's
// credentials at start-up is an error at once that names the settings to
// check (and never the secret).
func TestConnectNATSRefusedNamesSettings(t *testing.T) {
	o := testkit.NATSOptions(t.TempDir())
	o.Authorization = "tok-123"
	ns := testkit.RunNATS(t, o)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-guess\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		sec  settings.Security
		want string
	}{
		{"wrong token", settings.Security{NATSTokenFile: tokenFile}, "check LOOKUP_NATS_TOKEN_FILE"},
		{"no credentials", settings.Security{}, "no NATS credentials are configured"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, _ := testkit.TextLogger()
			cfg := settings.Config{NATSURL: ns.ClientURL(), Security: tt.sec}
			nc, err := connectNATS(cfg, "lookupd-test", logger, nil)
			if err == nil {
				nc.Close()
				t.Fatal("connectNATS succeeded, want the refusal")
			}
			if !errors.Is(err, natsconn.ErrRefused) {
				t.Errorf("err = %v, want natsconn.ErrRefused", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "tok-") {
				t.Errorf("err = %q holds the token", err)
			}
		})
	}
}

// TestConnectNATSWarnsLooseSecretFile: a NATS secret file others may read
// is used, with a warning naming its setting.
func TestConnectNATSWarnsLooseSecretFile(t *testing.T) {
	o := testkit.NATSOptions(t.TempDir())
	o.Authorization = "tok-123"
	ns := testkit.RunNATS(t, o)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("tok-123\n"), 0o644); err != nil { //nolint:gosec // G306: the loose mode is the test
		t.Fatal(err)
	}
	if err := os.Chmod(tokenFile, 0o644); err != nil { // whatever the umask
		t.Fatal(err)
	}
	logger, logs := testkit.TextLogger()
	cfg := settings.Config{NATSURL: ns.ClientURL(), Security: settings.Security{NATSTokenFile: tokenFile}}
	nc, err := connectNATS(cfg, "lookupd-test", logger, nil)
	if err != nil {
		t.Fatalf("connectNATS: %v", err)
	}
	nc.Close()
	if got := logs.String(); !strings.Contains(got, "LOOKUP_NATS_TOKEN_FILE") || !strings.Contains(got, "chmod 600") {
		t.Errorf("log = %q, want a warning naming LOOKUP_NATS_TOKEN_FILE", got)
	}
	if strings.Contains(logs.String(), "tok-123") {
		t.Error("the token reached the log")
	}
}

// TestServeStopsWhenNATSRefuses: serve does not retry credentials the
// server refuses; it stops at start-up naming the settings to check.
func TestServeStopsWhenNATSRefuses(t *testing.T) {
	o := testkit.NATSOptions(t.TempDir())
	o.Authorization = "tok-123"
	ns := testkit.RunNATS(t, o)
	p := start(t, serveEnv(t, ns, t.TempDir()), "serve")
	err := p.wait(t, 20*time.Second)
	if err == nil || !strings.Contains(err.Error(), "no NATS credentials are configured") {
		t.Errorf("serve = %v, want the refusal naming the NATS credential settings", err)
	}
}
