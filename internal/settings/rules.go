package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/lookup/persons/internal/keyfile"
)

// Settings serve cannot start without (RFC 8725 sections 3.8 and 3.9 for
// the issuer and audience: else it would accept tokens meant for other
// services).
var (
	ErrNoJWKS     = errors.New("no JWKS configured: set LOOKUP_JWKS_URL or LOOKUP_JWKS_FILE (--jwks-url, --jwks-file)")
	ErrNoIssuer   = errors.New("no token issuer configured: set LOOKUP_ISSUER (--issuer) to your identity provider's iss")
	ErrNoAudience = errors.New("no token audience configured: set LOOKUP_AUDIENCE (--audience) to this API's aud, " +
		"or LOOKUP_ALLOWED_CLIENTS to the client ids accepted for an identity provider that sets none (Amazon Cognito's access tokens)")
)

// CheckTokenRules refuses a configuration of a service that verifies
// tokens (serve, audit serve) that lacks settings it needs, naming all of
// them at once (Missing), and loudly logs one without an audience where
// that is explicitly allowed.
func (c Config) CheckTokenRules(logger *slog.Logger) error {
	if err := c.Missing(); err != nil {
		return err
	}
	if c.Audience == "" && len(c.AllowedClients) == 0 {
		logger.Warn("LOOKUP_ALLOW_NO_AUDIENCE=true: tokens are accepted whatever their aud and client, so a token the identity provider minted for another service or app client is accepted here too; " +
			"set LOOKUP_ALLOWED_CLIENTS to the client ids to accept instead (LOOKUP_ALLOW_NO_AUDIENCE is deprecated)")
	}
	return nil
}

// Missing returns the one error that names every setting serve needs and
// c lacks, nil when none is missing. It matches each of ErrNoJWKS,
// ErrNoIssuer and ErrNoAudience that applies.
func (c Config) Missing() error {
	var missing missingError
	if c.JWKSURL == "" && c.JWKSFile == "" {
		missing = append(missing, ErrNoJWKS)
	}
	if c.Issuer == "" {
		missing = append(missing, ErrNoIssuer)
	}
	if c.Audience == "" && !c.AllowNoAudience && len(c.AllowedClients) == 0 {
		missing = append(missing, ErrNoAudience)
	}
	if len(missing) == 0 {
		return nil
	}
	return missing
}

// missingError lists the settings missing at start-up.
type missingError []error

func (m missingError) Error() string {
	if len(m) == 1 {
		return m[0].Error()
	}
	msgs := make([]string, len(m))
	for i, err := range m {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("%d settings missing:\n  %s", len(m), strings.Join(msgs, "\n  "))
}

func (m missingError) Unwrap() []error { return m }

// CheckJWKS refuses a configuration that names no JWKS (ErrNoJWKS) or two.
func (c Config) CheckJWKS() error {
	switch {
	case c.JWKSURL == "" && c.JWKSFile == "":
		return ErrNoJWKS
	case c.JWKSURL != "" && c.JWKSFile != "":
		return errors.New("both LOOKUP_JWKS_URL and LOOKUP_JWKS_FILE are set: configure one JWKS source")
	}
	return nil
}

// ErrTLSPair: a certificate without its key, or a key without its
// certificate.
var ErrTLSPair = errors.New("LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE go together: set both for HTTPS, or neither")

// CheckTLS refuses, as a usage error, TLS settings of the API and admin
// listeners that do not go together.
func (c Security) CheckTLS() error {
	switch {
	case c.TLSCertFile != "" && c.TLSKeyFile != "":
		return nil
	case c.TLSCertFile != "" || c.TLSKeyFile != "":
		return &UsageError{ErrTLSPair}
	case c.TLSClientCAFile != "":
		return &UsageError{errors.New("LOOKUP_TLS_CLIENT_CA_FILE needs HTTPS: set LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE")}
	case c.AdminTLS:
		return &UsageError{errors.New("LOOKUP_ADMIN_TLS needs a certificate: set LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE")}
	}
	return nil
}

// CheckAccountingURL refuses, as a usage error, an accounting service URL
// without the token to send it.
func (c Accounting) CheckAccountingURL() error {
	if c.AccountingURL != "" && c.AccountingTokenFile == "" {
		return &UsageError{errors.New("LOOKUP_ACCOUNTING_URL needs LOOKUP_ACCOUNTING_TOKEN_FILE (--accounting-token-file): a token with the scope read:audit")}
	}
	return nil
}

// CheckRegistries refuses, as a usage error, LOOKUP_REGISTRIES_STRICT
// without both registries to hold the ledger's codes to.
func (c Accounting) CheckRegistries() error {
	if c.RegistriesStrict && (c.ClientsFile == "" || c.PurposesFile == "") {
		return &UsageError{errors.New("LOOKUP_REGISTRIES_STRICT needs LOOKUP_CLIENTS_FILE and LOOKUP_PURPOSES_FILE (--clients-file, --purposes-file)")}
	}
	return nil
}

// NATSAuthHint names the NATS authentication settings to check after the
// server refused the credentials: those that are set, or the choice when
// none is. It names settings and files, never their content.
func (c Security) NATSAuthHint() string {
	var set []string
	for _, s := range []struct{ env, v string }{{"LOOKUP_NATS_CREDS", c.NATSCreds}, {"LOOKUP_NATS_NKEY_FILE", c.NATSNkeyFile},
		{"LOOKUP_NATS_USER", c.NATSUser}, {"LOOKUP_NATS_PASSWORD_FILE", c.NATSPasswordFile}, {"LOOKUP_NATS_TOKEN_FILE", c.NATSTokenFile}} {
		if s.v != "" {
			set = append(set, s.env)
		}
	}
	if len(set) == 0 {
		return "no NATS credentials are configured: set one of LOOKUP_NATS_CREDS, LOOKUP_NATS_NKEY_FILE, " +
			"LOOKUP_NATS_USER with LOOKUP_NATS_PASSWORD_FILE, or LOOKUP_NATS_TOKEN_FILE"
	}
	return "check " + strings.Join(set, " and ")
}

// NATSSecretFiles are the NATS settings' files that hold secrets, for the
// permission check (WarnLoose), each named by its setting.
func (c Security) NATSSecretFiles() []keyfile.KeyFile {
	return []keyfile.KeyFile{
		keyfile.Secret("LOOKUP_NATS_CREDS", c.NATSCreds),
		keyfile.Secret("LOOKUP_NATS_NKEY_FILE", c.NATSNkeyFile),
		keyfile.Secret("LOOKUP_NATS_PASSWORD_FILE", c.NATSPasswordFile),
		keyfile.Secret("LOOKUP_NATS_TOKEN_FILE", c.NATSTokenFile),
		keyfile.Secret("LOOKUP_NATS_KEY_FILE", c.NATSKeyFile),
	}
}

// LetterheadUnset names the variables of the officer's letterhead that
// are not set, in the table's order; none when the letterhead is whole.
func (c Accounting) LetterheadUnset() []string {
	unset := map[string]bool{"covered-entity-name": c.CoveredEntityName == "",
		"covered-entity-address": len(c.CoveredEntityAddress) == 0, "privacy-officer-contact": c.PrivacyOfficerContact == ""}
	var out []string
	for _, s := range table {
		if unset[s.name] {
			out = append(out, envName(s.name))
		}
	}
	return out
}

// WarnLetterhead logs a warning naming the settings of the officer's
// letterhead that are unset, if any: the letters are printed without
// them (audit serve, once at its start).
func (c Accounting) WarnLetterhead(logger *slog.Logger) {
	if unset := c.LetterheadUnset(); len(unset) > 0 {
		logger.Warn("the officer's letters are printed without their sender's letterhead, or part of it: set "+strings.Join(unset, ", "), "unset", unset)
	}
}
