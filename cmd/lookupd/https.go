package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"

	"github.com/lookup/persons/internal/certreload"
	"github.com/lookup/persons/internal/keyfile"
)

var errTLSPair = errors.New("LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE go together: set both for HTTPS, or neither")

// listenerTLS returns the TLS configurations of the API and admin
// listeners (certreload.Listeners), nil for plain HTTP, and refuses
// TLS settings that do not go together.
func listenerTLS(cfg config, logger *slog.Logger) (api, admin *tls.Config, err error) {
	if cfg.TLSCertFile == "" && cfg.TLSKeyFile == "" {
		switch {
		case cfg.TLSClientCAFile != "":
			return nil, nil, &usageError{errors.New("LOOKUP_TLS_CLIENT_CA_FILE needs HTTPS: set LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE")}
		case cfg.AdminTLS:
			return nil, nil, &usageError{errors.New("LOOKUP_ADMIN_TLS needs a certificate: set LOOKUP_TLS_CERT_FILE and LOOKUP_TLS_KEY_FILE")}
		}
		return nil, nil, nil
	}
	if cfg.TLSCertFile == "" || cfg.TLSKeyFile == "" {
		return nil, nil, &usageError{errTLSPair}
	}
	keyfile.WarnLoose(logger, keyfile.Secret("LOOKUP_TLS_KEY_FILE", cfg.TLSKeyFile))
	return certreload.Listeners{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, ClientCAFile: cfg.TLSClientCAFile,
		Admin: cfg.AdminTLS, Logger: logger.With("component", "tls")}.Configs()
}

// listen opens the API and admin listeners; each is HTTPS when its TLS
// configuration is set (listenerTLS).
func listen(cfg config, logger *slog.Logger) (api, admin net.Listener, err error) {
	apiCfg, adminCfg, err := listenerTLS(cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	if api, err = net.Listen("tcp", cfg.HTTPAddr); err != nil {
		return nil, nil, fmt.Errorf("API listener: %w", err)
	}
	if apiCfg != nil {
		api = tls.NewListener(api, apiCfg)
	}
	if admin, err = net.Listen("tcp", cfg.AdminAddr); err != nil {
		api.Close()
		return nil, nil, fmt.Errorf("admin listener: %w", err)
	}
	if adminCfg != nil {
		admin = tls.NewListener(admin, adminCfg)
	}
	return api, admin, nil
}
