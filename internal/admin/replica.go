package admin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/lookup/persons/internal/replica"
)

// snapshotTimeout bounds a snapshot taken on request.
const snapshotTimeout = 30 * time.Minute

// ReplicaActions are the state-changing admin endpoints of a replica:
//
//	POST /snapshot   writes a snapshot now; 200 with its name and position,
//	                 409 before the model has caught up or without a bucket
//	POST /rebuild    starts a blue/green rebuild; 202, 409 while one runs
//
// The actions run under ctx (the server's background work), not their
// request's: a client that gives up does not abort them, a shutdown does.
func ReplicaActions(ctx context.Context, rep *replica.Replica, bucket string, logger *slog.Logger) map[string]http.Handler {
	return map[string]http.Handler{
		"POST /snapshot": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if bucket == "" {
				writeJSON(w, http.StatusConflict, map[string]string{"error": "no snapshot bucket configured (LOOKUP_SNAPSHOT_BUCKET)"})
				return
			}
			ctx, cancel := context.WithTimeout(ctx, snapshotTimeout)
			defer cancel()
			// The answer waits for the snapshot, which may take longer
			// than the listener's write timeout (a large model, a busy
			// machine): that timeout would cut the answer off while the
			// snapshot goes on.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(snapshotTimeout + time.Minute))
			info, name, err := rep.Snapshot(ctx)
			if actionFailed(w, logger, err, replica.ErrNotCaughtUp, "snapshot on request failed", "snapshot failed") {
				return
			}
			writeJSON(w, http.StatusOK, map[string]any{"bucket": bucket, "snapshot": name,
				"position": info.Position, "keys": info.Keys})
		}),
		"POST /rebuild": http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			if actionFailed(w, logger, rep.Rebuild(), replica.ErrRebuildRunning, "rebuild not started", "rebuild not started") {
				return
			}
			writeJSON(w, http.StatusAccepted, map[string]string{"status": "rebuilding",
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
		writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
	default:
		logger.Error(logMsg, "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": failed + "; see the log"})
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
