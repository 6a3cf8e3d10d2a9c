package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/internal/periodic"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/projector"
)

// storeOpener returns what opens a read model directory with cfg's
// encryption key and memory budget, and that key (nil: unencrypted).
// Errors name the key file.
func storeOpener(cfg config, logger *slog.Logger) (func(dir string) (*projector.Store, error), []byte, error) {
	var key []byte
	if cfg.EncryptionKeyFile != "" {
		warnLooseKeyFiles(logger, secretFile("LOOKUP_ENCRYPTION_KEY_FILE", cfg.EncryptionKeyFile))
		k, err := projector.ReadKeyFile(cfg.EncryptionKeyFile)
		if err != nil {
			return nil, nil, fmt.Errorf("encryption key file: %w", err)
		}
		key = k
	}
	if limit := softMemoryLimit(cfg.MemoryBudget, startMemoryLimit); limit > 0 {
		// The Go heap (Badger's memtables and caches included) is kept within
		// 3/4 of the budget by a soft limit: the garbage collector works
		// harder as it nears it. The last 1/4 is for the pages of the store's
		// memory-mapped files (see projector.StoreOptions.MemoryBudget).
		debug.SetMemoryLimit(limit)
	} else if cfg.MemoryBudget > 0 {
		logger.Info("GOMEMLIMIT is set: it is the soft memory limit, not 3/4 of the memory budget",
			"gomemlimit", startMemoryLimit, "memory_budget", cfg.MemoryBudget)
	}
	open := func(dir string) (*projector.Store, error) {
		s, err := projector.Open(dir, projector.StoreOptions{EncryptionKey: key, MemoryBudget: cfg.MemoryBudget,
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
// metrics go to reg.
func openReplica(cfg config, js jetstream.JetStream, reg prometheus.Registerer, logger *slog.Logger, pcfg projector.Config) (*replica.Replica, error) {
	open, key, err := storeOpener(cfg, logger)
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
		Building:          liftMemoryLimit(softMemoryLimit(cfg.MemoryBudget, startMemoryLimit)),
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

// startMemoryLimit is the Go soft memory limit the process started with:
// GOMEMLIMIT's, as the Go runtime read it from the environment, or
// math.MaxInt64 for none. It is read before any command sets its own.
var startMemoryLimit = debug.SetMemoryLimit(-1)

// softMemoryLimit is the Go soft memory limit lookupd keeps for a memory
// budget: 3/4 of it; 0 (none of its own) without a budget, or when the
// process started with a limit (started is not math.MaxInt64: GOMEMLIMIT
// was set), where the operator's limit stands.
func softMemoryLimit(budget, started int64) int64 {
	if budget <= 0 || started != math.MaxInt64 {
		return 0
	}
	return budget / 4 * 3
}

// liftMemoryLimit returns what lifts the Go soft memory limit while a
// snapshot is restored or a rebuild runs, and sets it back after
// (replica.Config.Building): each is a one-off that needs more than the
// budget's heap share for a while (two models are open during a rebuild),
// and under the limit the collector would take the CPU that the API needs.
// nil without a soft limit of its own (softMemoryLimit 0).
func liftMemoryLimit(limit int64) func(bool) {
	if limit <= 0 {
		return nil
	}
	var (
		mu    sync.Mutex
		lifts int // restores and rebuilds under way (a rebuild may start during a restore)
	)
	return func(building bool) {
		mu.Lock()
		defer mu.Unlock()
		if building {
			if lifts++; lifts == 1 {
				debug.SetMemoryLimit(math.MaxInt64)
			}
			return
		}
		if lifts--; lifts == 0 {
			debug.SetMemoryLimit(limit)
		}
	}
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

// snapshotEvery writes a snapshot of rep every cfg.SnapshotInterval once it
// has caught up, until ctx is done, when a bucket is configured; failures
// are logged and counted (the replica's metrics), and retried at the next
// tick.
func snapshotEvery(ctx context.Context, rep *replica.Replica, cfg config, logger *slog.Logger) {
	interval := cfg.SnapshotInterval
	if interval <= 0 || cfg.SnapshotBucket == "" {
		return
	}
	periodic.Every(ctx, interval, func(time.Time) {
		if _, _, err := rep.Snapshot(ctx); err != nil && !errors.Is(err, replica.ErrNotCaughtUp) && ctx.Err() == nil {
			logger.Error("snapshot failed; retrying at the next interval", "err", err, "retry_in", interval)
		}
	})
}

// replicaActions are the state-changing admin endpoints of a replica:
//
//	POST /snapshot   writes a snapshot now; 200 with its name and position,
//	                 409 before the model has caught up or without a bucket
//	POST /rebuild    starts a blue/green rebuild; 202, 409 while one runs
func replicaActions(rep *replica.Replica, bucket string, logger *slog.Logger) map[string]http.Handler {
	return map[string]http.Handler{
		"POST /snapshot": http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if bucket == "" {
				writeAdminJSON(w, http.StatusConflict, map[string]string{"error": "no snapshot bucket configured (LOOKUP_SNAPSHOT_BUCKET)"})
				return
			}
			// A client that gives up does not abort the snapshot.
			ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 30*time.Minute)
			defer cancel()
			info, name, err := rep.Snapshot(ctx)
			if actionFailed(w, logger, err, replica.ErrNotCaughtUp, "snapshot on request failed", "snapshot failed") {
				return
			}
			writeAdminJSON(w, http.StatusOK, map[string]any{"bucket": bucket, "snapshot": name,
				"position": info.Position, "keys": info.Keys})
		}),
		"POST /rebuild": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if actionFailed(w, logger, rep.Rebuild(), replica.ErrRebuildRunning, "rebuild not started", "rebuild not started") {
				return
			}
			writeAdminJSON(w, http.StatusAccepted, map[string]string{"status": "rebuilding",
				"progress": "logs and lookup_rebuild_* metrics"})
		}),
	}
}

// actionFailed answers the error of an admin action, if there is one, and
// reports whether there was: 409 with the error's text when it is conflict
// (the replica's state refuses the action for now), else 503 saying what
// failed, the error itself logged as logMsg (it may name files or URLs).
func actionFailed(w http.ResponseWriter, logger *slog.Logger, err, conflict error, logMsg, failed string) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, conflict):
		writeAdminJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
	default:
		logger.Error(logMsg, "err", err)
		writeAdminJSON(w, http.StatusServiceUnavailable, map[string]string{"error": failed + "; see the log"})
	}
	return true
}

func writeAdminJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
