package main

import (
	"context"
	"errors"
	"io"

	"github.com/lookup/persons/internal/dlq"
	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/settings"
)

func cmdErasure(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "erasure", "Usage: lookupd erasure status --person ID [flags]\n\nRun \"lookupd erasure status --help\" for its flags.\n",
		map[string]subCommand{"status": erasureStatus}, args, getenv, stdout, stderr)
}

func erasureStatus(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(settings.Erasure, "erasure status", `
Reports what remains of a deleted person in each place the service kept
them (the stream, the dead letters, older snapshots, each replica's files),
when each was cleared and when the erasure completed (docs/operations.md,
Erasure): ids, counts and times, never personal data.`, getenv)
	if err != nil {
		return err
	}
	person := c.Flags.StringLong("person", "", "the person's id (a consumer, business contact or signer)")
	asJSON := c.Flags.BoolLong("json", "write the report as JSON")
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	if *person == "" {
		return c.Refuse(stderr, errors.New("lookupd erasure status: give --person ID"))
	}
	cfg := c.Config
	nc, js, err := natsconn.WithJetStream(connectNATSWithin(ctx, cfg, "lookupd erasure", cfg.Logger(stderr), dlqConnectWait))
	if err != nil {
		return err
	}
	defer nc.Close()
	rep, err := erasure.Status(ctx, erasure.StatusConfig{JS: js, Bucket: cfg.ErasureBucket, Live: true, Stream: cfg.Stream,
		DLQStream: dlq.DefaultStream, SnapshotBucket: cfg.SnapshotBucket}, *person)
	if err != nil {
		return err
	}
	return rep.Write(stdout, *asJSON)
}
