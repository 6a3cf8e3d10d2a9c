package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/redact"
	"github.com/lookup/persons/internal/settings"
)

func cmdDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(settings.Demo, "demo", `
Publishes the demo data set of "lookupd dev" (three businesses, twenty
consumers, business contacts, signers of every status, type and access
level, some history) to the stream on any NATS server, through the real
event contract, and prints a consumer id to look up. Use it to load a
fresh compose stack or cluster. The stream must exist (nats stream add
--config deploy/streams/persons.json).

Publishing again is harmless: event ids are deterministic, so the stream
drops duplicates inside its duplicate window, and the projector skips
versions it has already applied.

With --binary the events are published in the CloudEvents binary content
mode (the attributes in ce- headers, the data as the body, as the
CloudEvents SDKs publish by default) instead of structured mode; lookupd
reads both. With --print nothing is published: the events are written to stdout as
JSON lines {"subject", "msg_id", "event"}, examples of the contract
(docs/events.md) to publish with other tools.`, getenv)
	if err != nil {
		return err
	}
	printOnly := c.Flags.BoolLong("print", "write the events to stdout as JSON lines instead of publishing them")
	binary := c.Flags.BoolLong("binary", "publish in CloudEvents binary content mode (attributes in ce- headers), as the CloudEvents SDKs do")
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	data, err := dev.NewDemoData()
	if err != nil {
		return fmt.Errorf("demo data: %w", err)
	}
	if *printOnly {
		return dev.WriteDemoLines(stdout, data)
	}
	mode := events.Structured
	if *binary {
		mode = events.Binary
	}
	return publishDemoTo(ctx, c.Config, data, mode, stdout)
}

// publishDemoTo publishes the demo events to cfg.Stream at cfg.NATSURL and
// reports on w how many were new.
func publishDemoTo(ctx context.Context, cfg settings.Config, data *dev.DemoData, mode events.ContentMode, w io.Writer) error {
	nc, js, err := natsconn.WithJetStream(connectNATSWithin(ctx, cfg, "lookupd-demo", slog.New(slog.DiscardHandler), 5*time.Second))
	if err != nil {
		return err
	}
	defer nc.Close()
	added, err := dev.PublishDemoToStream(ctx, js, cfg.Stream, data, mode)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("stream %s not found on %s: create it first (nats stream add --config deploy/streams/persons.json)", cfg.Stream, redact.URLs(cfg.NATSURL))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Published the demo data set to stream %s on %s: %d events, %d new (the others were already there).\n",
		cfg.Stream, redact.URLs(cfg.NATSURL), len(data.Events), added)
	fmt.Fprintf(w, "Once lookupd has applied them, try consumer %s:\n", data.Consumer)
	fmt.Fprintf(w, "  curl -s -H \"Authorization: Bearer $TOKEN\" 'http://localhost:8080/api/v1/authorized-signers?consumer_id=%s&expand=PROTECTED_PERSONAL_DATA'\n", data.Consumer)
	return nil
}
