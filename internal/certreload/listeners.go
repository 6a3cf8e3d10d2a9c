package certreload

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
)

// Listeners names the certificate of a service's API and admin listeners.
type Listeners struct {
	// CertFile and KeyFile are the certificate; both "": plain HTTP.
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

// Listen opens the API listener on apiAddr and the admin listener on
// adminAddr: HTTPS with l's certificate (the admin one only with l.Admin),
// or plain HTTP both when l names no certificate. The caller closes them.
func (l Listeners) Listen(apiAddr, adminAddr string) (api, admin net.Listener, err error) {
	var apiCfg, adminCfg *tls.Config
	if l.CertFile != "" || l.KeyFile != "" {
		if apiCfg, adminCfg, err = l.configs(); err != nil {
			return nil, nil, err
		}
	}
	if api, err = net.Listen("tcp", apiAddr); err != nil {
		return nil, nil, fmt.Errorf("API listener: %w", err)
	}
	if apiCfg != nil {
		api = tls.NewListener(api, apiCfg)
	}
	if admin, err = net.Listen("tcp", adminAddr); err != nil {
		api.Close()
		return nil, nil, fmt.Errorf("admin listener: %w", err)
	}
	if adminCfg != nil {
		admin = tls.NewListener(admin, adminCfg)
	}
	return api, admin, nil
}

// configs returns the TLS configurations of the API listener and of the
// admin listener (nil unless l.Admin), both serving the certificate of
// l's files, reloaded when they change.
func (l Listeners) configs() (api, admin *tls.Config, err error) {
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
