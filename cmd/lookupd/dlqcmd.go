package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/internal/dlq"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/settings"
)

// dlqConnectWait is how long a dlq command waits for NATS before giving up.
const dlqConnectWait = 10 * time.Second

func cmdDLQ(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return dlqCommand{connectWait: dlqConnectWait}.run(ctx, args, getenv, stdout, stderr)
}

// dlqCommand is "lookupd dlq" with its options (tests wait less).
type dlqCommand struct {
	connectWait time.Duration // how long to wait for NATS before giving up
}

func (d dlqCommand) run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "dlq", dlqUsage, map[string]subCommand{"ls": d.list, "replay": d.replay}, args, getenv, stdout, stderr)
}

const dlqUsage = `Usage: lookupd dlq <ls|replay> [flags]

Inspects and replays the dead-letter stream (PERSONS_DLQ), where the
projector puts the events that break the contract.

  ls       list the dead letters: sequence, time, subject, origin, reason
  replay   republish dead letters to their original subject (--seq N or --all)

Run "lookupd dlq <sub-command> --help" for its flags.
`

// newDLQCommand returns the command "dlq name" with its --dlq-stream flag.
func newDLQCommand(name, help string, getenv func(string) string) (*settings.Command, *string, error) {
	c, err := settings.NewCommand(settings.DLQ, "dlq "+name, help, getenv)
	if err != nil {
		return nil, nil, err
	}
	return c, c.Flags.StringLong("dlq-stream", dlq.DefaultStream, "dead-letter stream"), nil
}

// dlqTool connects to NATS as the other commands do (connectNATS) and
// returns the tool of the dead-letter stream. It fails when NATS is not
// reachable within d.connectWait. The caller closes the connection.
func (d dlqCommand) tool(ctx context.Context, cfg settings.Config, stream string, logger *slog.Logger) (*nats.Conn, *dlq.Tool, error) {
	nc, js, err := natsconn.WithJetStream(connectNATSWithin(ctx, cfg, "lookupd dlq", logger.With("component", "nats"), d.connectWait))
	if err != nil {
		return nil, nil, err
	}
	return nc, dlq.New(js, dlq.Config{Stream: stream}), nil
}

func (d dlqCommand) list(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, stream, err := newDLQCommand("ls", `
Lists the dead letters, oldest first: their sequence in the dead-letter
stream, when they were dead-lettered, their original subject, stream and
sequence, and why they were refused. Only headers are read: the bodies,
which may hold personal data, are never fetched nor shown.`, getenv)
	if err != nil {
		return err
	}
	asJSON := c.Flags.BoolLong("json", "write one JSON object per dead letter instead of a table")
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	nc, tool, err := d.tool(ctx, c.Config, *stream, c.Config.Logger(stderr))
	if err != nil {
		return err
	}
	defer nc.Close()
	return dlq.WriteList(ctx, tool, *stream, stdout, *asJSON)
}

func (d dlqCommand) replay(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, stream, err := newDLQCommand("replay", `
Republishes dead letters (--seq N, repeatable, or --all, oldest first) to
their original subject in their original stream, with their original body
and headers, once upstream or the decoder is fixed, and removes each from
the dead-letter stream once its republish is acknowledged. A replay gets a
message id of its own, so the stream does not drop it as a duplicate of the
event that failed, and a replay run again after a crash does not publish it
twice. An event that this build still cannot decode is left in place
(--force republishes it anyway; the projector will dead-letter it again).
Replay once every replica runs the fixed build.`, getenv)
	if err != nil {
		return err
	}
	var seqs []uint64
	c.Flags.FuncLong("seq", func(v string) error {
		s, err := dlq.ParseSeqs(v)
		seqs = append(seqs, s...)
		return err
	}, "sequence of a dead letter to replay (repeatable; see lookupd dlq ls)")
	all := c.Flags.BoolLong("all", "replay every dead letter, oldest first")
	force := c.Flags.BoolLong("force", "republish events that still do not decode")
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	if *all == (len(seqs) > 0) {
		return c.Refuse(stderr, errors.New("lookupd dlq replay: give --seq N (one or more) or --all"))
	}
	nc, tool, err := d.tool(ctx, c.Config, *stream, c.Config.Logger(stderr))
	if err != nil {
		return err
	}
	defer nc.Close()
	return dlq.ReplayReport(ctx, tool, seqs, dlq.ReplayOptions{Force: *force}, stdout)
}
