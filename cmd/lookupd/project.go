package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/redact"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/projector"
)

func cmdProject(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(settings.Project, "project", `
Runs the projector alone: it applies the events of the stream to the read
model in --data-dir, resuming from its checkpoint, until stopped (SIGTERM or
SIGINT). With --until-caught-up it exits 0 as soon as the read model has
reached the end of the stream as it stood at start-up: use it to build or
rebuild a read model before "lookupd serve" opens it. Progress shows as a
bar when stderr is a terminal, else as a log line every --progress-interval.
With --snapshot-bucket, an empty read model is first restored from the
newest snapshot of the stream, snapshots are written every
--snapshot-interval, and --until-caught-up writes one before it exits.`, getenv)
	if err != nil {
		return err
	}
	until := c.Flags.BoolLong("until-caught-up", "exit 0 once the read model has reached the end of the stream")
	every := c.PositiveDuration("progress-interval", 5*time.Second, "interval of progress log lines (when stderr is not a terminal)")
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	return project(ctx, c.Config, c.Config.Logger(stderr), projectOptions{
		untilCaughtUp: *until,
		progress:      lifecycle.ProgressConfig{Interval: *every, Bar: lifecycle.IsTerminal(stderr), BarOut: stderr},
	})
}

type projectOptions struct {
	untilCaughtUp bool
	progress      lifecycle.ProgressConfig
}

// project opens the read model and runs the projector on it
// (lifecycle.Project).
func project(ctx context.Context, cfg settings.Config, logger *slog.Logger, opts projectOptions) (err error) {
	logger.Info("starting lookupd project", "version", version, "nats_url", redact.URLs(cfg.NATSURL), "stream", cfg.Stream,
		"data_dir", cfg.DataDir, "encrypted", cfg.EncryptionKeyFile != "", "until_caught_up", opts.untilCaughtUp)
	nc, js, err := connectJetStream(cfg, logger, nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	rep, err := openReplica(cfg, js, nil, logger, projector.Config{})
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, closeReplica(rep, logger)) }()

	return lifecycle.Project(ctx, rep, lifecycle.ProjectConfig{
		UntilCaughtUp: opts.untilCaughtUp, Snapshot: cfg.SnapshotBucket != "", SnapshotInterval: cfg.SnapshotInterval,
		Progress: func(ctx context.Context) { lifecycle.ReportProgress(ctx, rep, logger, opts.progress) },
		Logger:   logger,
	})
}
