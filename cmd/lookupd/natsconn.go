package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/redact"
)

// connectJetStream connects to NATS (see connectNATS) as lookupd and
// returns the connection and its JetStream context. The caller closes the
// connection once the projector has stopped. health, when not nil, follows
// refusals.
func connectJetStream(cfg config, logger *slog.Logger, health *natsconn.Health) (*nats.Conn, jetstream.JetStream, error) {
	return natsconn.WithJetStream(connectNATS(cfg, "lookupd", logger.With("component", "nats"), health))
}

// connectNATS connects to cfg's NATS servers with cfg's NATS security
// settings (natsconn.Connect): a refusal of the credentials, a malformed
// URL or a failed TLS verification is an error at once; unreachable
// servers are retried in the background forever, with a capped backoff.
func connectNATS(cfg config, name string, logger *slog.Logger, health *natsconn.Health) (*nats.Conn, error) {
	keyfile.WarnLoose(logger, natsSecretFiles(cfg)...)
	c := natsconn.Config{Name: name, InboxPrefix: cfg.NATSInboxPrefix, Logger: logger}
	if health != nil {
		health.Follow(&c)
	}
	nc, err := natsconn.Connect(cfg.NATSURL, cfg.natsSecurity(), c)
	if errors.Is(err, natsconn.ErrRefused) {
		return nil, fmt.Errorf("%w; %s", err, cfg.natsAuthHint())
	}
	return nc, err
}

// natsAuthHint names the NATS authentication settings to check after the
// server refused the credentials: those that are set, or the choice when
// none is. It names settings and files, never their content.
func (c securityConfig) natsAuthHint() string {
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

// connectNATSWithin is connectNATS for a one-off command: it fails when
// NATS is not reachable within wait (or ctx ends).
func connectNATSWithin(ctx context.Context, cfg config, name string, logger *slog.Logger, wait time.Duration) (*nats.Conn, error) {
	nc, err := connectNATS(cfg, name, logger, nil)
	if err != nil {
		return nil, err
	}
	if !natsconn.WaitConnected(ctx, nc, wait) {
		nc.Close()
		return nil, fmt.Errorf("nats %s: not reachable within %v", redact.URLs(cfg.NATSURL), wait)
	}
	return nc, nil
}

// natsSecretFiles are the NATS settings' files that hold secrets, for the
// permission check, each named by its setting.
func natsSecretFiles(cfg config) []keyfile.File {
	return []keyfile.File{
		keyfile.Secret("LOOKUP_NATS_CREDS", cfg.NATSCreds),
		keyfile.Secret("LOOKUP_NATS_NKEY_FILE", cfg.NATSNkeyFile),
		keyfile.Secret("LOOKUP_NATS_PASSWORD_FILE", cfg.NATSPasswordFile),
		keyfile.Secret("LOOKUP_NATS_TOKEN_FILE", cfg.NATSTokenFile),
		keyfile.Secret("LOOKUP_NATS_KEY_FILE", cfg.NATSKeyFile),
	}
}
