package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/dlq"
	"github.com/lookup/persons/internal/erasure"
	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/projector"
)

// newEraser returns the eraser of serve's replica rep.
func newEraser(cfg settings.Config, js jetstream.JetStream, rep *replica.Replica, reg prometheus.Registerer, logger *slog.Logger) (*erasure.Eraser, error) {
	return erasure.New(erasure.Config{JS: js, Stream: cfg.Stream, DLQStream: dlq.DefaultStream, Bucket: cfg.ErasureBucket,
		Snapshots: rep.Snapshots(), Model: rep, Replica: cfg.ReplicaName(""), Delay: cfg.ErasureDelay,
		Registerer: reg, Logger: logger})
}

// compactEvery compacts rep's files every quarter of the erasure bound
// when a deletion was applied since the last compaction, and records each
// in the erasure's evidence.
func compactEvery(ctx context.Context, cfg settings.Config, rep *replica.Replica, eraser *erasure.Eraser, logger *slog.Logger) {
	rep.CompactEvery(ctx, cfg.ErasureDelay/4, logger, func(info replica.CompactionInfo) {
		if err := eraser.RecordCompaction(ctx, info.Position, info.At); err != nil && ctx.Err() == nil {
			logger.Error("the compaction is not in the erasure's evidence; recorded at the next one", "err", err)
		}
	})
}

func cmdErasure(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "status" {
		fmt.Fprint(stderr, "Usage: lookupd erasure status --person ID [flags]\n\nRun \"lookupd erasure status --help\" for its flags.\n")
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return nil
		}
		return &settings.UsageError{Err: errors.New("lookupd erasure: want the sub-command status")}
	}
	c, err := settings.NewCommand(settings.Erasure, "erasure status", `
Reports what remains of a person after a deletion, in every place the
service kept it: the stream's earlier events, the dead letters, the
snapshots older than the deletion, and each replica's files; when each was
cleared, and when the erasure completed (docs/operations.md, Erasure). It
reads the stream, the dead-letter stream, the snapshot bucket and the
erasure bucket with lookupd's NATS permissions, and prints ids, counts and
times: never personal data.`, getenv)
	if err != nil {
		return err
	}
	person := c.Flags.StringLong("person", "", "the person's id (a consumer, business contact or signer)")
	asJSON := c.Flags.BoolLong("json", "write the report as JSON")
	if err := c.Parse(args[1:], stdout, stderr); err != nil {
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
	sc := erasure.StatusConfig{JS: js, Bucket: cfg.ErasureBucket, Live: true, Stream: cfg.Stream, DLQStream: dlq.DefaultStream}
	if cfg.SnapshotBucket != "" {
		if sc.Snapshots, err = projector.NewSnapshots(js, projector.SnapshotsConfig{Bucket: cfg.SnapshotBucket}); err != nil {
			return err
		}
	}
	rep, err := erasure.Status(ctx, sc, *person)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return rep.WriteText(stdout)
}
