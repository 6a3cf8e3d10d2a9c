// Package memlimit keeps the Go soft memory limit of a process sized by a
// memory budget (LOOKUP_MEMORY_BUDGET): 3/4 of the budget for the Go heap
// (Badger's memtables and caches included), the last 1/4 for the pages of
// the store's memory-mapped files (see projector.StoreOptions.MemoryBudget).
// A limit the process started with (GOMEMLIMIT) stands.
package memlimit

import (
	"log/slog"
	"math"
	"runtime/debug"
	"sync"
)

// Start is the Go soft memory limit the process started with: GOMEMLIMIT's,
// as the Go runtime read it from the environment, or math.MaxInt64 for
// none. It is read before any command sets its own.
var Start = debug.SetMemoryLimit(-1)

// Soft is the Go soft memory limit kept for a memory budget: 3/4 of it; 0
// (none of its own) without a budget, or when the process started with a
// limit (started is not math.MaxInt64: GOMEMLIMIT was set), where the
// operator's limit stands.
func Soft(budget, started int64) int64 {
	if budget <= 0 || started != math.MaxInt64 {
		return 0
	}
	return budget / 4 * 3
}

// Apply sets the soft memory limit of budget (Soft, from Start) and returns
// it; it logs, instead, that a GOMEMLIMIT the process started with stands.
func Apply(budget int64, logger *slog.Logger) int64 {
	limit := Soft(budget, Start)
	if limit > 0 {
		// The garbage collector works harder as the heap nears it.
		debug.SetMemoryLimit(limit)
	} else if budget > 0 {
		logger.Info("GOMEMLIMIT is set: it is the soft memory limit, not 3/4 of the memory budget",
			"gomemlimit", Start, "memory_budget", budget)
	}
	return limit
}

// Lifter returns what lifts the Go soft memory limit while a snapshot is
// restored or a rebuild runs, and sets it back to limit after
// (replica.Config.Building): each is a one-off that needs more than the
// budget's heap share for a while (two models are open during a rebuild),
// and under the limit the collector would take the CPU that the API needs.
// nil without a soft limit of its own (limit 0).
func Lifter(limit int64) func(building bool) {
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
