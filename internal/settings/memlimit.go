// The memory budget: it sizes the memory budget of a process
// (LOOKUP_MEMORY_BUDGET, else 3/4 of its container's memory limit: SizeBudget,
// FromCgroup) and keeps its Go soft memory limit sized by it: 3/4 of the
// budget for the Go heap (Badger's memtables and caches included), the
// last 1/4 for the pages of the store's memory-mapped files (see
// projector.StoreOptions.MemoryBudget). A limit the process started with
// (GOMEMLIMIT) stands.

package settings

import (
	"context"
	"log/slog"
	"math"
	"runtime/debug"
	"sync"
)

// MemoryLimitAtStart is the Go soft memory limit the process started with: GOMEMLIMIT's,
// as the Go runtime read it from the environment, or math.MaxInt64 for
// none. It is read before any command sets its own.
var MemoryLimitAtStart = debug.SetMemoryLimit(-1)

// SoftMemoryLimit is the Go soft memory limit kept for a memory budget: 3/4 of it; 0
// (none of its own) without a budget, or when the process started with a
// limit (started is not math.MaxInt64: GOMEMLIMIT was set), where the
// operator's limit stands.
func SoftMemoryLimit(budget, started int64) int64 {
	if budget <= 0 || started != math.MaxInt64 {
		return 0
	}
	return budget / 4 * 3
}

// ApplyBudget sets the soft memory limit of budget b (Soft, from Start), logs
// the budget, where it came from and the soft limit in one line ("memory
// budget"; a warning when the container's limit could not be read), and
// returns the limit it set (0: none).
func ApplyBudget(b Budget, logger *slog.Logger) int64 {
	limit := SoftMemoryLimit(b.Bytes, MemoryLimitAtStart)
	if limit > 0 {
		// The garbage collector works harder as the heap nears it.
		debug.SetMemoryLimit(limit)
	}
	attrs := []any{"memory_budget", b.Bytes, "source", b.Source, "from", b.describe()}
	if b.Limit > 0 {
		attrs = append(attrs, "container_limit", b.Limit)
	}
	switch {
	case limit > 0:
		attrs = append(attrs, "go_memory_limit", limit, "go_memory_limit_from", "3/4 of the memory budget")
	case b.Bytes > 0:
		attrs = append(attrs, "go_memory_limit", MemoryLimitAtStart, "go_memory_limit_from", "GOMEMLIMIT")
	default:
		attrs = append(attrs, "go_memory_limit_from", "none: no memory budget")
	}
	level := slog.LevelInfo
	if b.Err != nil {
		level = slog.LevelWarn
	}
	logger.Log(context.Background(), level, "memory budget", attrs...)
	return limit
}

// MemoryLimitLifter returns what lifts the Go soft memory limit while a snapshot is
// restored or a rebuild runs, and sets it back to limit after
// (replica.Config.Building): each is a one-off that needs more than the
// budget's heap share for a while (two models are open during a rebuild),
// and under the limit the collector would take the CPU that the API needs.
// nil without a soft limit of its own (limit 0).
func MemoryLimitLifter(limit int64) func(building bool) {
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
