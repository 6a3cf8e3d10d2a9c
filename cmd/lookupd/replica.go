package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/keyfile"
	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/projector"
)

// openReplica opens the replica's read model in cfg.DataDir (its active
// model: see replica.ActiveDir), fed from cfg.Stream over js with pcfg,
// bootstrapped from and snapshotted to cfg.SnapshotBucket when set. Its
// metrics go to reg. Its memory budget is cfg.MemoryBudget, or for
// settings.Auto 3/4 of the container's memory limit (settings.Size, which
// Apply logs), and sets Go's soft memory limit.
func openReplica(cfg settings.Config, js jetstream.JetStream, reg prometheus.Registerer, logger *slog.Logger, pcfg projector.Config) (*replica.Replica, error) {
	budget := settings.SizeBudget(cfg.MemoryBudget, settings.FromCgroup)
	softLimit := settings.ApplyBudget(budget, logger)
	key, err := encryptionKey(cfg, logger)
	if err != nil {
		return nil, err
	}
	pcfg.Stream, pcfg.Logger = cfg.Stream, logger
	rc := replica.Config{
		Root:         cfg.DataDir,
		Store:        projector.StoreOptions{EncryptionKey: key, MemoryBudget: budget.Bytes, Logger: logger.With("component", "store")},
		NewProjector: func(s *projector.Store) *projector.Projector { return projector.New(js, s, pcfg) },
		Stream: func(ctx context.Context) (projector.StreamIdentity, error) {
			return projector.LookUpStream(ctx, js, cfg.Stream)
		},
		RebuildOnMismatch: cfg.RebuildOnMismatch,
		Building:          settings.MemoryLimitLifter(softLimit),
		Registerer:        reg,
		Logger:            logger,
	}
	if cfg.SnapshotBucket != "" {
		rc.Snapshots, err = projector.NewSnapshots(js, projector.SnapshotsConfig{Bucket: cfg.SnapshotBucket,
			Keep: cfg.SnapshotKeep, Key: key, Replica: cfg.ReplicaName(""), Logger: logger})
		if err != nil {
			return nil, err
		}
	}
	return replica.Open(rc)
}

// encryptionKey reads the key of LOOKUP_ENCRYPTION_KEY_FILE (nil when
// unset: unencrypted); the error names the setting's file.
func encryptionKey(cfg settings.Config, logger *slog.Logger) ([]byte, error) {
	if cfg.EncryptionKeyFile == "" {
		return nil, nil
	}
	keyfile.WarnLoose(logger, keyfile.Secret("LOOKUP_ENCRYPTION_KEY_FILE", cfg.EncryptionKeyFile))
	key, err := keyfile.ReadAES(cfg.EncryptionKeyFile)
	if err != nil {
		return nil, fmt.Errorf("encryption key file: %w", err)
	}
	return key, nil
}

// closeReplica closes the read model once no reader holds it, logging it.
func closeReplica(rep *replica.Replica, logger *slog.Logger) error {
	return lifecycle.CloseStore(lifecycle.StoreCloser{Close: rep.Close, Dir: rep.Dir(),
		Closed: "read model closed", Failed: "close read model"}, logger)
}
