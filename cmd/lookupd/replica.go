package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/memlimit"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/projector"
)

// storeOpener returns what opens a read model directory with cfg's
// encryption key and a memory budget of budget bytes (0: none), and that
// key (nil: unencrypted). Errors name the key file.
func storeOpener(cfg config, budget int64, logger *slog.Logger) (func(dir string) (*projector.Store, error), []byte, error) {
	var key []byte
	if cfg.EncryptionKeyFile != "" {
		keyfile.WarnLoose(logger, keyfile.Secret("LOOKUP_ENCRYPTION_KEY_FILE", cfg.EncryptionKeyFile))
		k, err := projector.ReadKeyFile(cfg.EncryptionKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("encryption key file: %w", err)
		}
		key = k
	}
	open := func(dir string) (*projector.Store, error) {
		s, err := projector.Open(dir, projector.StoreOptions{EncryptionKey: key, MemoryBudget: budget,
			Logger: logger.With("component", "store")})
		if err != nil {
			return nil, fmt.Errorf("read model: %w", err)
		}
		return s, nil
	}
	return open, key, nil
}

// openReplica opens the replica's read model in cfg.DataDir (its active
// model: see projector.ActiveDir), fed from cfg.Stream over js with pcfg,
// bootstrapped from and snapshotted to cfg.SnapshotBucket when set. Its
// metrics go to reg. Its memory budget is cfg.MemoryBudget, or for
// memlimit.Auto 3/4 of the container's memory limit (memlimit.Size, which
// Apply logs), and sets Go's soft memory limit.
func openReplica(cfg config, js jetstream.JetStream, reg prometheus.Registerer, logger *slog.Logger, pcfg projector.Config) (*replica.Replica, error) {
	budget := memlimit.Size(cfg.MemoryBudget, memlimit.FromCgroup)
	softLimit := memlimit.Apply(budget, logger)
	open, key, err := storeOpener(cfg, budget.Bytes, logger)
	if err != nil {
		return nil, err
	}
	pcfg.Stream, pcfg.Logger = cfg.Stream, logger
	rc := replica.Config{
		Root:         cfg.DataDir,
		Open:         open,
		NewProjector: func(s *projector.Store) *projector.Projector { return projector.New(js, s, pcfg) },
		Stream: func(ctx context.Context) (projector.StreamIdentity, error) {
			return projector.LookUpStream(ctx, js, cfg.Stream)
		},
		RebuildOnMismatch: cfg.RebuildOnMismatch,
		Building:          memlimit.Lifter(softLimit),
		Registerer:        reg,
		Logger:            logger,
	}
	if cfg.SnapshotBucket != "" {
		rc.Snapshots, err = projector.NewSnapshots(js, projector.SnapshotsConfig{Bucket: cfg.SnapshotBucket,
			Keep: cfg.SnapshotKeep, Key: key, Replica: replicaName(cfg), Logger: logger})
		if err != nil {
			return nil, err
		}
	}
	return replica.Open(rc)
}

// replicaName is the name of this replica: LOOKUP_REPLICA_ID, else the
// host name.
func replicaName(cfg config) string {
	if cfg.ReplicaID != "" {
		return cfg.ReplicaID
	}
	h, _ := os.Hostname()
	return h
}

// closeReplica closes the read model, logging it.
func closeReplica(rep *replica.Replica, logger *slog.Logger) error {
	dir := rep.Dir()
	if err := rep.Close(); err != nil {
		return fmt.Errorf("close read model: %w", err)
	}
	logger.Info("read model closed", "dir", dir)
	return nil
}
