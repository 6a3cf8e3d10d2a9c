package main

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
)

func TestTokenCommand(t *testing.T) {
	dir := t.TempDir()
	keyPath := filepath.Join(dir, "k", dev.KeyFile)
	runOK := func(t *testing.T, environ map[string]string, args ...string) string {
		t.Helper()
		var out, errOut testkit.LogBuffer
		if err := run(t.Context(), args, env(environ), &out, &errOut); err != nil {
			t.Fatalf("run %v: %v (stderr %q)", args, err, errOut.String())
		}
		return strings.TrimSpace(out.String())
	}
	// The key is created once, then reused: both JWKS prints agree.
	jwks1 := runOK(t, nil, "token", "--key", keyPath, "--create", "--print-jwks")
	jwks2 := runOK(t, nil, "token", "--key", keyPath, "--print-jwks")
	if jwks1 != jwks2 {
		t.Fatalf("JWKS changed between runs:\n%s\n%s", jwks1, jwks2)
	}
	set, err := jwk.Parse([]byte(jwks2))
	if err != nil {
		t.Fatalf("parse printed JWKS: %v", err)
	}
	if set.Len() != 1 {
		t.Fatalf("JWKS has %d keys, want 1", set.Len())
	}
	if strings.Contains(jwks2, `"d"`) {
		t.Fatalf("printed JWKS holds private material:\n%s", jwks2)
	}

	tenant := "0E8E2B8C-7A56-4E2B-9E55-3C1C1B7E5A11"
	tests := []struct {
		name    string
		env     map[string]string
		args    []string
		want    map[string]any // claims that must be present, as JSON values
		absent  []string
		ttlWant time.Duration
	}{
		{
			name: "defaults",
			args: []string{"token", "--key", keyPath},
			// lookupd dev's issuer and audience, which serve requires (issue 12).
			want:    map[string]any{"sub": "dev-user", "scope": "read:persons", "iss": settings.DevIssuer, "aud": settings.DevAudience},
			absent:  []string{settings.DefaultTenantClaim},
			ttlWant: time.Hour,
		},
		{
			name: "flags and environment",
			env:  map[string]string{"LOOKUP_ISSUER": "https://issuer.example", "LOOKUP_AUDIENCE": "lookup", "LOOKUP_TENANT_CLAIM": "tenants"},
			args: []string{"token", "--key", keyPath, "--scope", "read:persons  read:persons:ssn", "--ttl", "5m", "--sub", "alice", "--tenant", tenant},
			want: map[string]any{"sub": "alice", "scope": "read:persons read:persons:ssn", "iss": "https://issuer.example",
				"aud": "lookup", "tenants": []any{strings.ToLower(tenant)}},
			absent:  []string{settings.DefaultTenantClaim},
			ttlWant: 5 * time.Minute,
		},
		{
			name:    "tenant without a configured claim uses business_ids",
			args:    []string{"token", "--key", keyPath, "--tenant", tenant + "," + tenant},
			want:    map[string]any{settings.DefaultTenantClaim: []any{strings.ToLower(tenant), strings.ToLower(tenant)}},
			ttlWant: time.Hour,
		},
		{
			name:    "tenant claim flag without tenants adds no claim",
			args:    []string{"token", "--key", keyPath, "--tenant-claim", "tenants"},
			want:    map[string]any{"sub": "dev-user"},
			absent:  []string{"tenants", settings.DefaultTenantClaim},
			ttlWant: time.Hour,
		},
		{
			name:    "LOOKUP_TENANT_CLAIM without tenants adds no claim",
			env:     map[string]string{"LOOKUP_TENANT_CLAIM": settings.DefaultTenantClaim},
			args:    []string{"token", "--key", keyPath, "--tenant", ""},
			want:    map[string]any{"sub": "dev-user"},
			absent:  []string{settings.DefaultTenantClaim},
			ttlWant: time.Hour,
		},
		{
			name:    "default key path is under the data dir",
			env:     map[string]string{"LOOKUP_DATA_DIR": filepath.Join(dir, "k")},
			args:    []string{"token"},
			want:    map[string]any{"sub": "dev-user"},
			ttlWant: time.Hour,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tok := runOK(t, tt.env, tt.args...)
			parsed, err := jwt.Parse([]byte(tok), jwt.WithKeySet(set), jwt.WithValidate(true))
			if err != nil {
				t.Fatalf("token does not verify against the printed JWKS: %v", err)
			}
			exp, _ := parsed.Expiration()
			iat, _ := parsed.IssuedAt()
			if got := exp.Sub(iat); got != tt.ttlWant {
				t.Errorf("exp - iat = %v, want %v", got, tt.ttlWant)
			}
			claims := testkit.TokenClaims(t, tok)
			for k, want := range tt.want {
				got, _ := json.Marshal(claims[k])
				wantJSON, _ := json.Marshal(want)
				if k == "aud" && string(got) != string(wantJSON) {
					// aud may be a string or an array of one.
					wantJSON, _ = json.Marshal([]any{want})
				}
				if string(got) != string(wantJSON) {
					t.Errorf("claim %s = %s, want %s", k, got, wantJSON)
				}
			}
			for _, k := range tt.absent {
				if _, ok := claims[k]; ok {
					t.Errorf("claim %s present, want none", k)
				}
			}
		})
	}

	t.Run("count mints distinct valid tokens", func(t *testing.T) {
		toks := strings.Split(runOK(t, nil, "token", "--key", keyPath, "--count", "3", "--sub", "bob"), "\n")
		if len(toks) != 3 {
			t.Fatalf("got %d lines, want 3 tokens", len(toks))
		}
		jtis := map[string]bool{}
		for _, tok := range toks {
			if _, err := jwt.Parse([]byte(tok), jwt.WithKeySet(set), jwt.WithValidate(true)); err != nil {
				t.Fatalf("token does not verify against the printed JWKS: %v", err)
			}
			claims := testkit.TokenClaims(t, tok)
			jti, _ := claims["jti"].(string)
			if jti == "" || jtis[jti] {
				t.Errorf("jti = %q, want a distinct non-empty one (seen %v)", jti, jtis)
			}
			jtis[jti] = true
			if claims["sub"] != "bob" {
				t.Errorf("sub = %v, want bob", claims["sub"])
			}
		}
		if claims := testkit.TokenClaims(t, runOK(t, nil, "token", "--key", keyPath)); claims["jti"] != nil {
			t.Errorf("a single token has jti %v, want none", claims["jti"])
		}
		var out, errOut testkit.LogBuffer
		err := run(t.Context(), []string{"token", "--key", keyPath, "--count", "0"}, env(nil), &out, &errOut)
		if !errors.Is(err, settings.ErrUsage) {
			t.Errorf("--count 0: err = %v, want a usage error", err)
		}
	})

	t.Run("missing key", func(t *testing.T) {
		var out, errOut testkit.LogBuffer
		missing := filepath.Join(dir, "nope.pem")
		err := run(t.Context(), []string{"token", "--key", missing}, env(nil), &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), "lookupd dev") {
			t.Errorf("err = %v, want it to name %s and point to lookupd dev", err, missing)
		}
		if out.String() != "" {
			t.Errorf("stdout = %q, want nothing", out.String())
		}
	})
}
