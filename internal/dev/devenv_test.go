package dev

import (
	"errors"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
)

func TestStart(t *testing.T) {
	tests := []struct {
		name     string
		dataDir  bool // a --data-dir given
		wantTemp bool
	}{
		{"temporary directory, per-user key", false, true},
		{"given data directory, its own key", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			cfg := EnvConfig{Stream: "PERSONS", Logger: slog.New(slog.DiscardHandler),
				Getenv: func(k string) string {
					if k == "XDG_CACHE_HOME" {
						return cache
					}
					return ""
				}}
			wantKey := filepath.Join(cache, "lookupd", KeyFile)
			if tt.dataDir {
				cfg.DataDir = t.TempDir()
				wantKey = filepath.Join(cfg.DataDir, KeyFile)
			}
			e, err := StartEnv(t.Context(), cfg)
			if err != nil {
				t.Fatalf("Start: %v", err)
			}
			if e.Temp != tt.wantTemp || e.KeyPath != wantKey {
				t.Errorf("got Temp %v, KeyPath %s, want %v, %s", e.Temp, e.KeyPath, tt.wantTemp, wantKey)
			}
			if e.NATSURL == "" || e.Data == nil || e.Key == nil || e.Keys == nil || len(e.JWKS) == 0 {
				t.Errorf("got an environment with a part missing: %+v", e)
			}
			rec := httptest.NewRecorder()
			e.JWKSHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/jwks.json", nil))
			if got := rec.Body.String(); got != string(e.JWKS) || rec.Header().Get("Cache-Control") != "no-store" {
				t.Errorf("JWKS handler: got %q (Cache-Control %q), want the JWKS, no-store", got, rec.Header().Get("Cache-Control"))
			}
			if err := e.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			_, err = os.Stat(e.Dir)
			if removed := errors.Is(err, fs.ErrNotExist); removed != tt.wantTemp {
				t.Errorf("after Close: data directory removed %v, want %v", removed, tt.wantTemp)
			}
			if _, err := os.Stat(wantKey); err != nil {
				t.Errorf("dev key after Close: %v", err)
			}
		})
	}
}
