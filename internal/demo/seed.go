package demo

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/devnats"
)

// Seed connects to the NATS server at url, creates the stream (or updates
// its configuration: devnats.EnsurePersonsStream) and publishes d into it
// when it is empty: the set-up of "lookupd dev".
func Seed(ctx context.Context, url, stream string, d *Data, logger *slog.Logger) error {
	nc, err := nats.Connect(url, nats.Name("lookupd-dev-publisher"))
	if err != nil {
		return fmt.Errorf("dev NATS server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("dev NATS server: %w", err)
	}
	if err := devnats.EnsurePersonsStream(ctx, js, stream); err != nil {
		return err
	}
	n, err := Publish(ctx, js, stream, events.NewPublisher(js), d)
	if err != nil {
		return err
	}
	if n == 0 {
		logger.Info("stream already holds events; demo data not published again", "stream", stream)
	} else {
		logger.Info("demo data published", "stream", stream, "events", n)
	}
	return nil
}
