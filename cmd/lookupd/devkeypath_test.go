package main

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/wait"
)

func TestDevKeyPath(t *testing.T) {
	tests := []struct {
		name    string
		environ map[string]string
		dataDir string
		given   bool
		want    string
	}{
		{"data dir given", map[string]string{"HOME": "/home/a"}, "/d", true, "/d/dev-key.pem"},
		{"per-user key under HOME", map[string]string{"HOME": "/home/a"}, "/tmp/x", false, "/home/a/.cache/lookupd/dev-key.pem"},
		{"per-user key under XDG_CACHE_HOME", map[string]string{"HOME": "/home/a", "XDG_CACHE_HOME": "/c"}, "/tmp/x", false, "/c/lookupd/dev-key.pem"},
		{"relative XDG_CACHE_HOME ignored", map[string]string{"HOME": "/home/a", "XDG_CACHE_HOME": "c"}, "/tmp/x", false, "/home/a/.cache/lookupd/dev-key.pem"},
		{"no home: the data dir", nil, "/tmp/x", false, "/tmp/x/dev-key.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := devKeyPath(env(tt.environ), tt.dataDir, tt.given); got != tt.want {
				t.Errorf("devKeyPath = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTokenDefaultsToDevKey checks that "lookupd token" without --key
// signs with the key "lookupd dev" uses, so that its tokens are accepted:
// the per-user key without --data-dir, the data directory's with it.
func TestTokenDefaultsToDevKey(t *testing.T) {
	home := t.TempDir()
	dataDir := filepath.Join(t.TempDir(), "dev")
	tests := []struct {
		name      string
		devArgs   []string
		tokenArgs []string
		tokenEnv  map[string]string
	}{
		{"temporary data dir: the per-user key", []string{"dev"}, []string{"token"}, map[string]string{"HOME": home}},
		{"--data-dir: its key", []string{"dev", "--data-dir", dataDir}, []string{"token", "--data-dir", dataDir}, map[string]string{"HOME": home}},
		{"--data-dir: its key, through LOOKUP_DATA_DIR", []string{"dev", "--data-dir", dataDir}, []string{"token"}, map[string]string{"HOME": home, "LOOKUP_DATA_DIR": dataDir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, map[string]string{"HOME": home, "LOOKUP_HTTP_ADDR": "127.0.0.1:0", "LOOKUP_ADMIN_ADDR": "127.0.0.1:0"}, tt.devArgs...)
			wait.For(t, 60*time.Second, func() error {
				if !strings.Contains(p.stdout.String(), "Stop with Ctrl-C.") {
					return fmt.Errorf("no banner yet; stderr:\n%s", p.stderr)
				}
				return nil
			})
			var out, errOut logtest.Buffer
			if err := run(context.Background(), tt.tokenArgs, env(tt.tokenEnv), &out, &errOut); err != nil {
				t.Fatalf("token: %v (stderr %q)", err, errOut.String())
			}
			curls := curlLine.FindAllStringSubmatch(p.stdout.String(), -1)
			if len(curls) == 0 {
				t.Fatalf("no curl lines in:\n%s", p.stdout)
			}
			if code, body, err := get(curls[0][1], strings.TrimSpace(out.String())); err != nil || code != http.StatusOK {
				t.Errorf("GET %s with the default token: %d %s %v, want 200", curls[0][1], code, body, err)
			}
			p.cancel()
			if err := p.wait(t, 30*time.Second); err != nil {
				t.Fatalf("dev: %v", err)
			}
		})
	}
}
