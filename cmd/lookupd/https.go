package main

import (
	"log/slog"
	"net"

	"github.com/lookup/persons/internal/certreload"
	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/settings"
)

// listen opens the API and admin listeners of cfg, each HTTPS when its
// TLS settings say so (certreload.Listeners), after refusing TLS settings
// that do not go together.
func listen(cfg settings.Config, logger *slog.Logger) (api, admin net.Listener, err error) {
	if err := cfg.CheckTLS(); err != nil {
		return nil, nil, err
	}
	keyfile.WarnLoose(logger, keyfile.Secret("LOOKUP_TLS_KEY_FILE", cfg.TLSKeyFile))
	return certreload.Listeners{CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile, ClientCAFile: cfg.TLSClientCAFile,
		Admin: cfg.AdminTLS, Logger: logger.With("component", "tls")}.Listen(cfg.HTTPAddr, cfg.AdminAddr)
}
