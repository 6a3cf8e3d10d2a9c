package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/settings"
)

// connectJetStream connects to NATS (see connectNATS) as lookupd and
// returns the connection and its JetStream context. The caller closes the
// connection once the projector has stopped. health, when not nil, follows
// refusals.
func connectJetStream(cfg settings.Config, logger *slog.Logger, health *natsconn.Health) (*nats.Conn, jetstream.JetStream, error) {
	return natsconn.WithJetStream(connectNATS(cfg, "lookupd", logger.With("component", "nats"), health))
}

// connectNATS connects to cfg's NATS servers with cfg's NATS security
// settings (natsconn.Connect): a refusal of the credentials (the error
// names the settings to check), a malformed URL or a failed TLS
// verification is an error at once; unreachable servers are retried in
// the background forever, with a capped backoff.
func connectNATS(cfg settings.Config, name string, logger *slog.Logger, health *natsconn.Health) (*nats.Conn, error) {
	keyfile.WarnLoose(logger, cfg.NATSSecretFiles()...)
	c := natsconn.Config{Name: name, InboxPrefix: cfg.NATSInboxPrefix, Logger: logger}
	if health != nil {
		health.Follow(&c)
	}
	nc, err := natsconn.Connect(cfg.NATSURL, cfg.NATSSecurity(), c)
	if errors.Is(err, natsconn.ErrRefused) {
		return nil, fmt.Errorf("%w; %s", err, cfg.NATSAuthHint())
	}
	return nc, err
}

// connectNATSWithin is connectNATS for a one-off command: it fails when
// NATS is not reachable within wait (or ctx ends).
func connectNATSWithin(ctx context.Context, cfg settings.Config, name string, logger *slog.Logger, wait time.Duration) (*nats.Conn, error) {
	nc, err := connectNATS(cfg, name, logger, nil)
	if err != nil {
		return nil, err
	}
	if err := natsconn.Reachable(ctx, nc, cfg.NATSURL, wait); err != nil {
		return nil, err
	}
	return nc, nil
}
