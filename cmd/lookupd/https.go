package main

import (
	"crypto/tls"
	"errors"
	"log/slog"

	"github.com/lookup/persons/certreload"
)

var errTLSPair = errors.New("LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE go together: set both for HTTPS, or neither")

// apiTLS returns the TLS configuration of the API listener, nil for plain
// HTTP (no certificate configured): TLS 1.2 and up, the certificate
// reloaded when its files change (certreload), client certificates
// required when a client CA is configured.
func apiTLS(cfg config, logger *slog.Logger) (*tls.Config, error) {
	if cfg.TLSCertFile == "" && cfg.TLSKeyFile == "" {
		if cfg.TLSClientCAFile != "" {
			return nil, &usageError{errors.New("LOOKUP_TLS_CLIENT_CA_FILE needs HTTPS: set LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE")}
		}
		return nil, nil
	}
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
		return nil, &usageError{errTLSPair}
	}
	warnLooseKeyFiles(logger, secretFile("LOOKUP_TLS_KEY_FILE", cfg.TLSKeyFile))
	r, err := certreload.New(cfg.TLSCertFile, cfg.TLSKeyFile, 0, logger.With("component", "tls"))
	if err != nil {
		return nil, err
	}
	return certreload.ServerConfig(r, cfg.TLSClientCAFile)
}
