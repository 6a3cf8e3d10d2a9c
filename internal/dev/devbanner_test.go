package dev

import (
	"testing"
	"time"
)

func TestHTTPURL(t *testing.T) {
	tests := []struct{ name, addr, want string }{
		{"loopback", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"every interface", "[::]:8080", "http://localhost:8080"},
		{"no host", ":8080", "http://localhost:8080"},
		{"no port", "example", "http://example"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := HTTPURL(tt.addr); got != tt.want {
				t.Errorf("HTTPURL(%q) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}

func TestMoreTokensCommand(t *testing.T) {
	defaults := TokenFlags{KeyPath: "/k", DefaultKey: "/k", Issuer: "i", DefaultIssuer: "i", Audience: "a", DefaultAudience: "a"}
	tests := []struct {
		name string
		edit func(f *TokenFlags)
		want string
	}{
		{"the defaults: the README's command", func(*TokenFlags) {}, READMETokenCommand},
		{"another key, quoted", func(f *TokenFlags) { f.KeyPath = "/it's/k" },
			RepoLookupd + ` token --key '/it'\''s/k' --scope 'read:persons read:persons:ssn'`},
		{"another issuer and audience", func(f *TokenFlags) { f.Issuer, f.Audience = "x", "y" },
			RepoLookupd + " token --scope 'read:persons read:persons:ssn' --issuer x --audience y"},
		{"tenancy", func(f *TokenFlags) { f.TenantClaim, f.Tenants = "biz", []string{"t1", "t2"} },
			RepoLookupd + " token --scope 'read:persons read:persons:ssn' --tenant-claim biz --tenant t1,t2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := defaults
			tt.edit(&f)
			if got := MoreTokensCommand(f); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestShortDuration(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		want string
	}{
		{"hours", 12 * time.Hour, "12h"},
		{"hours and minutes", 90 * time.Minute, "1h30m"},
		{"minutes", 5 * time.Minute, "5m"},
		{"seconds", 90 * time.Second, "1m30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shortDuration(tt.d); got != tt.want {
				t.Errorf("shortDuration(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}
