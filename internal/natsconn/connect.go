package natsconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/redact"
)

// DefaultInboxPrefix is the prefix of lookupd's reply subjects (JetStream
// API answers, consumer deliveries). A least-privilege deployment lets only
// lookupd's user subscribe under it (deploy/README.md).
const DefaultInboxPrefix = "_INBOX_lookupd"

// Config is how Connect behaves beyond the security settings.
type Config struct {
	Name        string       // client name shown by the server ("lookupd" when empty)
	InboxPrefix string       // reply subject prefix ("" = nats.go's default _INBOX)
	Logger      *slog.Logger // connection events; nil = discarded
	// OnRefused, when set, is called when the server refuses the
	// credentials after the connection was established (a revoked user,
	// an expired credential), and OnAccepted when it accepts them again
	// (a reconnect).
	OnRefused  func(error)
	OnAccepted func()
}

// Connect connects to the NATS servers at urls (comma-separated) with the
// security s. It fails at once, wrapping ErrRefused, when the server
// refuses the credentials, and for a malformed URL or a TLS set-up the
// server's certificate does not pass. When the servers are merely
// unreachable it does not fail: the connection retries in the background
// forever, with a capped exponential backoff, logging each attempt.
func Connect(urls string, s Security, cfg Config) (*nats.Conn, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	shown := redact.URLs(urls)
	secOpts, err := s.Options()
	if err != nil {
		return nil, err
	}
	opts := append(baseOptions(cfg, shown), secOpts...)
	nc, err := nats.Connect(urls, opts...)
	switch {
	case err == nil:
		return nc, nil
	case refused(err):
		return nil, fmt.Errorf("nats %s: %w (%w): check the NATS user settings (credentials, nkey, user and password, token)", shown, ErrRefused, err)
	case badTLS(err):
		return nil, fmt.Errorf("nats %s: TLS: %w (check the CA, certificate and key settings)", shown, err)
	case malformed(err):
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // a *url.Error repeats the URL, credentials included
		}
		return nil, fmt.Errorf("nats %s: %w", shown, err)
	}
	// Unreachable for now: retry in the background.
	nc, err = nats.Connect(urls, append(opts, nats.RetryOnFailedConnect(true))...)
	if err != nil {
		return nil, fmt.Errorf("nats %s: %w", shown, err)
	}
	if !nc.IsConnected() {
		cfg.Logger.Warn("nats unreachable; retrying in the background", "url", shown)
	}
	return nc, nil
}

// baseOptions are the connection options whatever the security.
func baseOptions(cfg Config, shown string) []nats.Option {
	log := cfg.Logger
	name := cfg.Name
	if name == "" {
		name = "lookupd"
	}
	report := func(err error) {
		if refused(err) {
			log.Error("the NATS server refused our credentials; check the NATS user settings", "url", shown, "err", err)
			if cfg.OnRefused != nil {
				cfg.OnRefused(err)
			}
		}
	}
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(ReconnectDelay),
		nats.ConnectHandler(func(nc *nats.Conn) {
			log.Info("nats connected", "url", redact.URL(nc.ConnectedUrl()))
		}),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("nats disconnected; reconnecting", "err", err)
				report(err)
			}
		}),
		nats.ReconnectErrHandler(func(_ *nats.Conn, err error) {
			log.Warn("nats unreachable; retrying", "url", shown, "err", err)
			report(err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("nats reconnected", "url", redact.URL(nc.ConnectedUrl()))
			if cfg.OnAccepted != nil {
				cfg.OnAccepted()
			}
		}),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
			log.Warn("nats error", "err", err)
			report(err)
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			if err := nc.LastError(); err != nil {
				log.Error("nats connection closed", "err", err)
				report(err)
			}
		}),
	}
	if cfg.InboxPrefix != "" {
		opts = append(opts, nats.CustomInboxPrefix(cfg.InboxPrefix))
	}
	return opts
}

// ReconnectDelay is the backoff between rounds of reconnect attempts:
// 250ms doubling up to 1s, with up to 20% jitter so that replicas do not
// retry in step. The cap is low so that a replica is back within about a
// second of its broker (a reconnect attempt is one TCP dial per server).
func ReconnectDelay(attempts int) time.Duration {
	d := 250 * time.Millisecond << min(max(attempts-1, 0), 2)
	return d + time.Duration(rand.Int64N(int64(d/5)+1)) //nolint:gosec // G404: retry jitter needs no cryptographic randomness
}

// badTLS reports whether err is the server's certificate (or ours)
// failing verification, or the server not speaking TLS when asked to.
func badTLS(err error) bool {
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var rec tls.RecordHeaderError
	var ae *tls.AlertError
	// An alert from the server (e.g. "certificate required") is wrapped in
	// unexported types: its text is all there is to go by.
	if strings.Contains(err.Error(), "remote error: tls:") {
		return true
	}
	return errors.As(err, &ua) || errors.As(err, &hn) || errors.As(err, &ci) || errors.As(err, &rec) ||
		errors.As(err, &ae) || errors.Is(err, nats.ErrSecureConnRequired) || errors.Is(err, nats.ErrSecureConnWanted) ||
		errors.Is(err, nats.ErrClientCertOrRootCAsRequired)
}

// malformed reports whether err is a URL that does not parse.
func malformed(err error) bool {
	var ue *url.Error
	return errors.As(err, &ue) && ue.Op == "parse"
}

// WithJetStream returns nc with its JetStream context, for a call such as
// WithJetStream(Connect(...)): a failure to connect (err) is passed on;
// nc is closed when its JetStream context cannot be made.
func WithJetStream(nc *nats.Conn, err error) (*nats.Conn, jetstream.JetStream, error) {
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}
