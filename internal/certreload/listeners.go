package certreload

import (
	"crypto/tls"
	"log/slog"
)

// Listeners names the certificate of a service's API and admin listeners.
type Listeners struct {
	CertFile, KeyFile string
	// ClientCAFile, when set, makes the API require client certificates
	// that this CA bundle verifies.
	ClientCAFile string
	// Admin makes the admin listener speak HTTPS with the same
	// certificate, without asking for client certificates (probes and
	// Prometheus have none).
	Admin  bool
	Logger *slog.Logger
}

// Configs returns the TLS configurations of the API listener and of the
// admin listener (nil unless l.Admin), both serving the certificate of
// l's files, reloaded when they change.
func (l Listeners) Configs() (api, admin *tls.Config, err error) {
	r, err := New(l.CertFile, l.KeyFile, 0, l.Logger)
	if err != nil {
		return nil, nil, err
	}
	if api, err = ServerConfig(r, l.ClientCAFile); err != nil {
		return nil, nil, err
	}
	if l.Admin {
		if admin, err = ServerConfig(r, ""); err != nil {
			return nil, nil, err
		}
	}
	return api, admin, nil
}
