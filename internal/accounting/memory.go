package accounting

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// MinMemoryBudget is the smallest Options.MemoryBudget Open accepts.
const MinMemoryBudget = 32 << 20

// withMemoryBudget sizes Badger's memory to budget bytes
// (Options.MemoryBudget), as the read model of persons is sized
// (projector/memory.go), for a store that is written in bulk while it
// catches up with the ledger and read a range at a time:
//
//   - memtables: two of budget/16 each, with their write-ahead logs of the
//     same size mapped in memory (Badger's default is five of 64 MiB). A
//     memtable also bounds a transaction, which Apply splits when it is
//     too big;
//   - no compression of the tables: with Snappy, Badger's buffers for the
//     tables it flushes and compacts took over a gigabyte of the heap while
//     the index of ten million records was built, and every read of a
//     compressed block goes through the block cache. The values are
//     compact already (value.go); the tables are larger on disk, their
//     mapped pages reclaimable;
//   - hence no block cache, and no index cache: the tables' indexes and
//     Bloom filters stay in memory (tens of MiB for ten million records);
//   - value log files of budget/4 (capped at Badger's 1 GiB default),
//     values above a small share of a memtable in it (no record's value
//     is that large);
//   - two compactors instead of four, each building tables in memory.
//
// That is at most 1/8 of the budget on the Go heap and 1/8 in mapped
// files; the caller keeps the Go heap within 3/4 of the budget (the soft
// memory limit of internal/memlimit), which leaves the follower's batches
// and the searches the rest.
func withMemoryBudget(o badger.Options, budget int64) (badger.Options, error) {
	if budget < MinMemoryBudget {
		return o, fmt.Errorf("memory budget %d bytes is below the minimum of %d", budget, MinMemoryBudget)
	}
	return o.
		WithValueThreshold(min(o.ValueThreshold, budget/16*15/100/2)).
		WithMemTableSize(budget / 16).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(8).
		WithBlockCacheSize(0).
		WithIndexCacheSize(0).
		WithValueLogFileSize(min(budget/4, o.ValueLogFileSize)).
		WithNumCompactors(2).
		WithCompression(options.None), nil
}
