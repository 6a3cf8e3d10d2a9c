package main

import (
	"github.com/lookup/persons/internal/natsconn"
)

// securityConfig holds the settings of the NATS connection's security, the
// API's HTTPS and the token issuer/audience opt-out (see
// docs/security.md).
type securityConfig struct {
	NATSCreds        string
	NATSNkeyFile     string
	NATSUser         string
	NATSPasswordFile string
	NATSTokenFile    string
	NATSCAFile       string
	NATSCertFile     string
	NATSKeyFile      string
	NATSInboxPrefix  string
	TLSCertFile      string
	TLSKeyFile       string
	TLSClientCAFile  string
	AllowNoAudience  bool
	AdminTLS         bool
}

// natsSecurity returns the natsconn.Security of c.
func (c securityConfig) natsSecurity() natsconn.Security {
	return natsconn.Security{CredsFile: c.NATSCreds, NkeyFile: c.NATSNkeyFile, User: c.NATSUser,
		PasswordFile: c.NATSPasswordFile, TokenFile: c.NATSTokenFile, CAFile: c.NATSCAFile,
		CertFile: c.NATSCertFile, KeyFile: c.NATSKeyFile}
}

// natsSettings are the settings of every command that connects to NATS,
// besides nats-url.
var natsSettings = []string{"nats-creds", "nats-nkey-file", "nats-user", "nats-password-file",
	"nats-token-file", "nats-ca-file", "nats-cert-file", "nats-key-file", "nats-inbox-prefix"}

// securitySettings are the rows of the settings table for securityConfig.
var securitySettings = []setting{
	{"nats-creds", "LOOKUP_NATS_CREDS", "", "NATS credentials file (user JWT and nkey seed)",
		str(func(c *config) *string { return &c.NATSCreds })},
	{"nats-nkey-file", "LOOKUP_NATS_NKEY_FILE", "", "NATS nkey seed file",
		str(func(c *config) *string { return &c.NATSNkeyFile })},
	{"nats-user", "LOOKUP_NATS_USER", "", "NATS user name (with --nats-password-file)",
		str(func(c *config) *string { return &c.NATSUser })},
	{"nats-password-file", "LOOKUP_NATS_PASSWORD_FILE", "", "file holding the NATS user's password",
		str(func(c *config) *string { return &c.NATSPasswordFile })},
	{"nats-token-file", "LOOKUP_NATS_TOKEN_FILE", "", "file holding a NATS authentication token",
		str(func(c *config) *string { return &c.NATSTokenFile })},
	{"nats-ca-file", "LOOKUP_NATS_CA_FILE", "", "PEM CA bundle that verifies the NATS servers' certificates (TLS)",
		str(func(c *config) *string { return &c.NATSCAFile })},
	{"nats-cert-file", "LOOKUP_NATS_CERT_FILE", "", "client certificate for NATS (mutual TLS, with --nats-key-file)",
		str(func(c *config) *string { return &c.NATSCertFile })},
	{"nats-key-file", "LOOKUP_NATS_KEY_FILE", "", "client key for NATS (mutual TLS)",
		str(func(c *config) *string { return &c.NATSKeyFile })},
	{"nats-inbox-prefix", "LOOKUP_NATS_INBOX_PREFIX", natsconn.DefaultInboxPrefix, "prefix of lookupd's NATS reply subjects (a least-privilege deployment allows only lookupd's user under it)",
		str(func(c *config) *string { return &c.NATSInboxPrefix })},
	{"tls-cert-file", "LOOKUP_TLS_CERT_FILE", "", "certificate (PEM) of the API's HTTPS listener; reloaded when the file changes (none: plain HTTP)",
		str(func(c *config) *string { return &c.TLSCertFile })},
	{"tls-key-file", "LOOKUP_TLS_KEY_FILE", "", "key (PEM) of the API's HTTPS certificate",
		str(func(c *config) *string { return &c.TLSKeyFile })},
	{"tls-client-ca-file", "LOOKUP_TLS_CLIENT_CA_FILE", "", "CA bundle (PEM): the API requires client certificates it verifies (mutual TLS)",
		str(func(c *config) *string { return &c.TLSClientCAFile })},
	{"allow-no-audience", "LOOKUP_ALLOW_NO_AUDIENCE", "false", "serve without LOOKUP_AUDIENCE, for an identity provider that sets no aud (logged as a warning)",
		boolean("allow no audience", func(c *config) *bool { return &c.AllowNoAudience })},
	{"admin-tls", "LOOKUP_ADMIN_TLS", "false", "true: the admin listener speaks HTTPS too, with the API's certificate (no client certificates asked)",
		boolean("admin tls", func(c *config) *bool { return &c.AdminTLS })},
}
