// Package certreload serves a TLS certificate from a pair of PEM files and
// picks up a new pair when the files change (cert-manager and other
// rotations write new files in place), without a restart: each handshake
// looks at the files' modification times, at most once per interval, and
// loads them again when either has changed. A pair that does not load (a
// half-written rotation, a key that does not match) is logged and the
// previous certificate kept.
package certreload

import (
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"
)

// DefaultInterval is how often at most the files are looked at.
const DefaultInterval = time.Second

// Reloader holds the certificate of a pair of files. It is safe for
// concurrent use.
type Reloader struct {
	certFile, keyFile string
	interval          time.Duration
	log               *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamp   [2]time.Time // modification times of the loaded files
	checked time.Time
}

// New loads the pair certFile, keyFile and returns its Reloader; an
// invalid pair is an error. interval 0 means DefaultInterval; logger nil
// discards.
func New(certFile, keyFile string, interval time.Duration, logger *slog.Logger) (*Reloader, error) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	r := &Reloader{certFile: certFile, keyFile: keyFile, interval: interval, log: logger}
	stamp, err := r.stamps()
	if err != nil {
		return nil, err
	}
	if err := r.load(stamp); err != nil {
		return nil, err
	}
	return r, nil
}

// GetCertificate is tls.Config.GetCertificate: the current certificate,
// reloaded first if the files changed.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := time.Now(); now.Sub(r.checked) >= r.interval {
		r.checked = now
		if stamp, err := r.stamps(); err != nil {
			r.log.Warn("TLS certificate files unreadable; keeping the loaded certificate", "err", err)
		} else if stamp != r.stamp {
			if err := r.load(stamp); err != nil {
				r.log.Warn("new TLS certificate not loaded; keeping the previous one", "err", err)
			} else {
				r.log.Info("TLS certificate reloaded", "cert_file", r.certFile)
			}
		}
	}
	return r.cert, nil
}

// load loads the pair, recording stamp as its modification times. The
// caller holds r.mu (or owns r).
func (r *Reloader) load(stamp [2]time.Time) error {
	c, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("TLS certificate %s and key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert, r.stamp = &c, stamp
	return nil
}

func (r *Reloader) stamps() ([2]time.Time, error) {
	var s [2]time.Time
	for i, f := range []string{r.certFile, r.keyFile} {
		fi, err := os.Stat(f)
		if err != nil {
			return s, fmt.Errorf("TLS certificate: %w", err)
		}
		s[i] = fi.ModTime()
	}
	return s, nil
}

// ServerConfig returns a TLS 1.2+ server configuration serving r's
// certificate; with clientCAFile it requires client certificates that
// this CA bundle verifies.
func ServerConfig(r *Reloader, clientCAFile string) (*tls.Config, error) {
	cfg := &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: r.GetCertificate,
		NextProtos:     []string{"http/1.1"},
	}
	if clientCAFile != "" {
		pool, err := loadPool(clientCAFile)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
