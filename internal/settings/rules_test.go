package settings

import (
	"errors"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestMissing: every setting serve needs and lacks is named in one error,
// each a match for errors.Is; none is missing once all are set.
func TestMissing(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []error
	}{
		{"none set", Config{}, []error{ErrNoJWKS, ErrNoIssuer, ErrNoAudience}},
		{"issuer only", Config{Issuer: "i"}, []error{ErrNoJWKS, ErrNoAudience}},
		{"audience opted out", Config{JWKSURL: "https://idp/jwks", Issuer: "i", Security: Security{AllowNoAudience: true}}, nil},
		{"clients instead of an audience", Config{JWKSURL: "https://idp/jwks", Issuer: "i", AllowedClients: []string{"app"}}, nil},
		{"all set", Config{JWKSFile: "f", Issuer: "i", Audience: "a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Missing()
			if (err == nil) != (len(tt.want) == 0) {
				t.Fatalf("Missing = %v, want %v", err, tt.want)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("Missing = %v, want it to match %v", err, w)
				}
			}
			if len(tt.want) > 1 && !strings.HasPrefix(err.Error(), "2 settings missing:\n  ") && !strings.HasPrefix(err.Error(), "3 settings missing:\n  ") {
				t.Errorf("Missing = %q, want them counted, one a line", err)
			}
		})
	}
}

// TestCheckTokenRules: a missing setting is refused; an audience opted
// out of is a warning.
func TestCheckTokenRules(t *testing.T) {
	logger, logs := testkit.TextLogger()
	if err := (Config{}).CheckTokenRules(logger); !errors.Is(err, ErrNoIssuer) {
		t.Errorf("CheckTokenRules with nothing set = %v, want ErrNoIssuer among others", err)
	}
	cfg := Config{JWKSFile: "f", Issuer: "i", Security: Security{AllowNoAudience: true}}
	if err := cfg.CheckTokenRules(logger); err != nil {
		t.Errorf("CheckTokenRules without audience, allowed = %v", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "LOOKUP_ALLOW_NO_AUDIENCE=true") {
		t.Errorf("no warning of the audience opted out of:\n%s", logs)
	}
}

// TestSettingRules: the settings that go together, and those that
// exclude each other.
func TestSettingRules(t *testing.T) {
	tests := []struct {
		name      string
		check     func() error
		wantIs    error  // nil: no error
		wantUsage bool   // a usage error (exit status 2)
		wantMsg   string // in the error
	}{
		{"one JWKS", Config{JWKSFile: "f"}.CheckJWKS, nil, false, ""},
		{"no JWKS", Config{}.CheckJWKS, ErrNoJWKS, false, ""},
		{"two JWKS", Config{JWKSFile: "f", JWKSURL: "https://idp/jwks"}.CheckJWKS, nil, false, "both LOOKUP_JWKS_URL and LOOKUP_JWKS_FILE are set"},
		{"plain HTTP", Security{}.CheckTLS, nil, false, ""},
		{"HTTPS", Security{TLSCertFile: "c", TLSKeyFile: "k", TLSClientCAFile: "ca", AdminTLS: true}.CheckTLS, nil, false, ""},
		{"certificate without key", Security{TLSCertFile: "c"}.CheckTLS, ErrTLSPair, true, ""},
		{"key without certificate", Security{TLSKeyFile: "k"}.CheckTLS, ErrTLSPair, true, ""},
		{"client CA without certificate", Security{TLSClientCAFile: "ca"}.CheckTLS, nil, true, "LOOKUP_TLS_CLIENT_CA_FILE needs HTTPS"},
		{"admin TLS without certificate", Security{AdminTLS: true}.CheckTLS, nil, true, "LOOKUP_ADMIN_TLS needs a certificate"},
		{"accounting URL with token", Accounting{AccountingURL: "https://acc", AccountingTokenFile: "t"}.CheckAccountingURL, nil, false, ""},
		{"accounting URL without token", Accounting{AccountingURL: "https://acc"}.CheckAccountingURL, nil, true, "LOOKUP_ACCOUNTING_URL needs LOOKUP_ACCOUNTING_TOKEN_FILE"},
		{"strict registries", Accounting{RegistriesStrict: true, ClientsFile: "c", PurposesFile: "p"}.CheckRegistries, nil, false, ""},
		{"strict without registries", Accounting{RegistriesStrict: true, ClientsFile: "c"}.CheckRegistries, nil, true, "LOOKUP_REGISTRIES_STRICT needs LOOKUP_CLIENTS_FILE and LOOKUP_PURPOSES_FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.check()
			if wantErr := tt.wantIs != nil || tt.wantMsg != ""; (err != nil) != wantErr {
				t.Fatalf("err = %v, want an error: %v", err, wantErr)
			}
			if err == nil {
				return
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want it to match %v", err, tt.wantIs)
			}
			if got := errors.Is(err, ErrUsage); got != tt.wantUsage {
				t.Errorf("err = %v: a usage error %v, want %v", err, got, tt.wantUsage)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

// TestNATSAuthHint names the credential settings that are set, or the
// choice when none is, never their files' content.
func TestNATSAuthHint(t *testing.T) {
	tests := []struct {
		name string
		sec  Security
		want string
	}{
		{"token file", Security{NATSTokenFile: "/run/tok"}, "check LOOKUP_NATS_TOKEN_FILE"},
		{"user and password", Security{NATSUser: "u", NATSPasswordFile: "/run/pw"}, "check LOOKUP_NATS_USER and LOOKUP_NATS_PASSWORD_FILE"},
		{"none", Security{}, "no NATS credentials are configured: set one of LOOKUP_NATS_CREDS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.sec.NATSAuthHint(); !strings.HasPrefix(got, tt.want) {
				t.Errorf("NATSAuthHint = %q, want %q", got, tt.want)
			}
		})
	}
}
