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
// listeners, nil for plain HTTP. The API speaks HTTPS when a certificate
// is configured: TLS 1.2 and up, the certificate reloaded when its files
// change (certreload), client certificates required when a client CA is
// configured. The admin listener speaks HTTPS with the same certificate
// when LOOKUP_ADMIN_TLS is true, without asking for client certificates
// (probes and Prometheus have none).
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
	r, err := certreload.New(cfg.TLSCertFile, cfg.TLSKeyFile, 0, logger.With("component", "tls"))
	if err != nil {
		return nil, nil, err
	}
	if api, err = certreload.ServerConfig(r, cfg.TLSClientCAFile); err != nil {
		return nil, nil, err
	}
	if cfg.AdminTLS {
		if admin, err = certreload.ServerConfig(r, ""); err != nil {
			return nil, nil, err
		}
	}
	return api, admin, nil
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
