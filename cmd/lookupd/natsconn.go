package main

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

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
			logger.Info("nats connected", "url", nc.ConnectedUrlRedacted())
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
			logger.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			logger.Warn("nats error", "err", err)
		}),
	)
	if err != nil {
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
	return d + time.Duration(rand.Int64N(int64(d/5)+1))
}

// redactURLs returns urls with any password replaced, for logs.
func redactURLs(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if u, err := url.Parse(strings.TrimSpace(p)); err == nil {
			parts[i] = u.Redacted()
		}
	}
	return strings.Join(parts, ",")
}
