package admin

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const secret = "s3cret-admin-token-0123456789"

func TestRequire(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	on, err := NewTokenGuard([]byte(secret+"\n"), logger)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		guard  *TokenGuard
		authz  string
		want   int
		called bool
	}{
		{"off refuses even the right token", TokenGuardOff(), "Bearer " + secret, http.StatusForbidden, false},
		{"nil guard is off", nil, "Bearer " + secret, http.StatusForbidden, false},
		{"right token", on, "Bearer " + secret, http.StatusOK, true},
		{"scheme is case-insensitive", on, "bearer " + secret, http.StatusOK, true},
		{"no header", on, "", http.StatusUnauthorized, false},
		{"wrong token", on, "Bearer " + secret + "x", http.StatusUnauthorized, false},
		{"prefix of the token", on, "Bearer " + secret[:len(secret)-1], http.StatusUnauthorized, false},
		{"basic scheme", on, "Basic " + secret, http.StatusUnauthorized, false},
		{"token without scheme", on, secret, http.StatusUnauthorized, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := false
			h := tt.guard.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
			req := httptest.NewRequest(http.MethodPost, "/rebuild", nil)
			if tt.authz != "" {
				req.Header.Set("Authorization", tt.authz)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want || called != tt.called {
				t.Errorf("status %d, handler called %v; want %d, %v", rec.Code, called, tt.want, tt.called)
			}
			if tt.want == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Errorf("401 without a WWW-Authenticate challenge")
			}
		})
	}
	if strings.Contains(logs.String(), secret[:MinTokenLength]) {
		t.Errorf("the logs hold the token:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "admin request refused") {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		path    string
		wantErr string // "-": no error, and the guard is off
	}{
		{"no token file", "", "-"},
		{"token with a trailing newline", write("ok", secret+"\n"), ""},
		{"missing file", filepath.Join(dir, "none"), "no such file"},
		{"empty file", write("empty", "\n"), "0 bytes"},
		{"short token", write("short", "abc"), "at least 16"},
		{"space inside", write("space", "0123456789 0123456789"), "white space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := LoadTokenGuard(tt.path, nil)
			if tt.wantErr == "-" {
				if err != nil || g == nil || g.Enabled() {
					t.Fatalf("Load = %v, %v; want a guard that is off", g, err)
				}
				return
			}
			if tt.wantErr == "" {
				if err != nil || !g.Enabled() {
					t.Fatalf("Load = %v, %v; want an enabled guard", g, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Load error = %v, want one containing %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), "0123456789") {
				t.Errorf("error %q quotes the token", err)
			}
		})
	}
}
