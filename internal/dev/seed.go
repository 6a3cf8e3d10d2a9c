package dev

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
)

// SeedDemo connects to the NATS server at url, creates the stream (or updates
// its configuration: EnsurePersonsStream) and publishes d into it
// when it is empty: the set-up of "lookupd dev".
func SeedDemo(ctx context.Context, url, stream string, d *DemoData, logger *slog.Logger) error {
	nc, err := nats.Connect(url, nats.Name("lookupd-dev-publisher"))
	if err != nil {
		return fmt.Errorf("dev NATS server: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("dev NATS server: %w", err)
	}
	if err := EnsurePersonsStream(ctx, js, stream); err != nil {
		return err
	}
	n, err := PublishDemo(ctx, js, stream, events.NewPublisher(js), d)
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

// PublishDemoToStream publishes d through js to stream, which must exist (an
// error wrapping jetstream.ErrStreamNotFound otherwise), and returns how
// many events were new (PublishAll), in content mode mode.
func PublishDemoToStream(ctx context.Context, js jetstream.JetStream, stream string, d *DemoData, mode events.ContentMode) (int, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("stream %s: %w", stream, err)
	}
	return PublishAllDemo(ctx, events.NewPublisher(js, events.WithContentMode(mode)), s.CachedInfo().State.LastSeq, d)
}

// line is one line of WriteLines.
type line struct {
	Subject string          `json:"subject"`
	MsgID   string          `json:"msg_id"`
	Event   json.RawMessage `json:"event"`
}

// WriteDemoLines writes d's events to w as JSON lines {"subject", "msg_id",
// "event"}, in publishing order: examples of the contract to publish
// with other tools ("lookupd demo --print").
func WriteDemoLines(w io.Writer, d *DemoData) error {
	enc := json.NewEncoder(w)
	for _, ev := range d.Events {
		body, err := events.Encode(ev)
		if err != nil {
			return fmt.Errorf("encode demo event %s: %w", ev.ID, err)
		}
		if err := enc.Encode(line{Subject: ev.Subject(), MsgID: ev.ID, Event: body}); err != nil {
			return err
		}
	}
	return nil
}
