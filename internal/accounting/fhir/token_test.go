package fhir_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/accounting/fhir"

	"github.com/lookup/persons/internal/accounting"
)

func TestReadTokenFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, path, want, wantErr string
	}{
		{"trimmed", write("ok", "  secret.token \n"), "secret.token", ""},
		{"empty", write("empty", " \n"), "", "SETTING " + filepath.Join(dir, "empty") + ": empty"},
		{"missing", filepath.Join(dir, "missing"), "", "SETTING: open "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := fhir.ReadTokenFile("SETTING", tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one starting %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestAuthenticatedCallerWithoutCaller(t *testing.T) {
	if _, err := accounting.AuthenticatedCaller(httptest.NewRequest("GET", "/", nil)); err == nil {
		t.Error("got no error for a request without an authenticated caller, want one")
	}
}
