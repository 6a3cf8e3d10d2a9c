package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lookup/persons/internal/settings"
)

// startServe runs serve with the settings of environ and opts, in the
// background, until the test ends.
func startServe(t *testing.T, environ map[string]string, opts serveOptions) *program {
	t.Helper()
	cfg, err := parseConfig(settings.Serve, environ)
	if err != nil {
		t.Fatal(err)
	}
	return startFunc(t, "serve", func(ctx context.Context, _, stderr io.Writer) error {
		return serve(ctx, cfg, cfg.Logger(stderr), opts)
	})
}

func TestAdminActionsGuard(t *testing.T) {
	ns := runNATS(t)
	createStream(t, jetStream(t, ns), "PERSONS")
	const secret = "admin-token-for-tests-0123456789"
	tokenFile := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(tokenFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		tokenFile string
		authz     string
		want      int
	}{
		{"off without a token file, even with a token", "", "Bearer " + secret, http.StatusForbidden},
		{"off without a token file", "", "", http.StatusForbidden},
		{"token file, no token", tokenFile, "", http.StatusUnauthorized},
		{"token file, wrong token", tokenFile, "Bearer not-the-admin-token-at-all", http.StatusUnauthorized},
		{"token file, right token", tokenFile, "Bearer " + secret, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pokes atomic.Int32
			environ := serveEnv(t, ns, filepath.Join(t.TempDir(), "data"))
			environ["LOOKUP_ADMIN_TOKEN_FILE"] = tt.tokenFile
			p := startServe(t, environ, serveOptions{adminActions: map[string]http.Handler{
				"POST /poke": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { pokes.Add(1) }),
			}})
			admin := "http://" + p.addrs(t)["admin"]
			waitReady(t, p.addrs(t)["admin"])

			req, _ := http.NewRequest(http.MethodPost, admin+"/poke", nil)
			if tt.authz != "" {
				req.Header.Set("Authorization", tt.authz)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			wantPokes := int32(0)
			if tt.want == http.StatusOK {
				wantPokes = 1
			}
			if resp.StatusCode != tt.want || pokes.Load() != wantPokes {
				t.Errorf("POST /poke = %d, action ran %d times; want %d, %d", resp.StatusCode, pokes.Load(), tt.want, wantPokes)
			}
			for _, path := range []string{"/livez", "/readyz", "/metrics"} {
				if code, body, err := get(admin+path, ""); err != nil || code != http.StatusOK {
					t.Errorf("GET %s without a token = %d %.80s %v, want 200", path, code, body, err)
				}
			}
			if strings.Contains(p.stderr.String(), secret) {
				t.Errorf("the logs hold the admin token")
			}
		})
	}
}

func TestServeRefusesABadAdminTokenFile(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("abc"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, file := range map[string]string{"missing": filepath.Join(t.TempDir(), "none"), "short": short} {
		t.Run(name, func(t *testing.T) {
			environ := map[string]string{
				"LOOKUP_NATS_URL": "nats://127.0.0.1:1", "LOOKUP_DATA_DIR": t.TempDir(),
				"LOOKUP_JWKS_FILE": writeJWKS(t), "LOOKUP_ADMIN_TOKEN_FILE": file,
				"LOOKUP_ISSUER": testIssuer, "LOOKUP_AUDIENCE": testAudience,
			}
			err := run(t.Context(), []string{"serve"}, env(environ), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), "admin token file") {
				t.Errorf("serve = %v, want an error naming the admin token file", err)
			}
		})
	}
}
