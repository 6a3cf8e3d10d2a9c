package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
	"github.com/lookup/persons/query"
)

// newProjector connects to NATS (see connectNATS) and returns the projector
// that feeds store from cfg.Stream. The caller closes the connection once
// the projector has stopped.
// visible, when not nil, observes each event's publish-to-visible time in
// seconds.
func newProjector(cfg config, store *projector.Store, logger *slog.Logger, visible prometheus.Observer) (*nats.Conn, *projector.Projector, error) {
	nc, err := connectNATS(cfg.NATSURL, logger.With("component", "nats"))
	if err != nil {
		return nil, nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, projector.New(js, store, projector.Config{Stream: cfg.Stream, Logger: logger, ObserveVisible: observeSeconds(visible)}), nil
}

// connectNATS connects to the NATS servers at urls (comma-separated). It
// does not fail when they are unreachable: the connection retries forever
// with a capped exponential backoff, logging each disconnect, failed
// attempt and reconnect, and the projector stays not-ready meanwhile.
// It fails only for a malformed URL.
func connectNATS(urls string, logger *slog.Logger) (*nats.Conn, error) {
	shown := redactURLs(urls)
	nc, err := nats.Connect(urls,
		nats.Name("lookupd"),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.CustomReconnectDelay(reconnectDelay),
		nats.ConnectHandler(func(nc *nats.Conn) {
			logger.Info("nats connected", "url", redactURLs(nc.ConnectedUrl()))
		}),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			if err != nil {
				logger.Warn("nats disconnected; reconnecting", "err", err)
			}
		}),
		nats.ReconnectErrHandler(func(nc *nats.Conn, err error) {
			logger.Warn("nats unreachable; retrying", "url", shown, "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			logger.Info("nats reconnected", "url", redactURLs(nc.ConnectedUrl()))
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			logger.Warn("nats error", "err", err)
		}),
	)
	if err != nil {
		// A *url.Error repeats the URL, credentials included: keep its cause.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("nats %s: %w", shown, err)
	}
	if !nc.IsConnected() {
		logger.Warn("nats unreachable; retrying in the background", "url", shown)
	}
	return nc, nil
}

// reconnectDelay is the backoff between rounds of reconnect attempts:
// 250ms doubling up to 8s, with 20% jitter so that replicas do not retry
// in step.
func reconnectDelay(attempts int) time.Duration {
	d := 250 * time.Millisecond << min(max(attempts-1, 0), 5)
	return d + time.Duration(rand.Int64N(int64(d/5)+1)) //nolint:gosec // jitter, not a secret
}

// redactURLs returns urls (comma-separated) fit for logs and errors, each
// through query.RedactURL: no user information (a token alone too), no
// query. Every URL the program logs goes through it.
func redactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		parts[i] = query.RedactURL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}
