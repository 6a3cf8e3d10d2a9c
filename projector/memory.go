package projector

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// MinMemoryBudget is the smallest StoreOptions.MemoryBudget Open accepts.
const MinMemoryBudget = 32 << 20

// withMemoryBudget sizes Badger's memory to budget bytes (see
// StoreOptions.MemoryBudget):
//
//   - memtables: two of budget/16 each (Badger's default is up to five of
//     64 MiB, which is what made the process grow by hundreds of MiB under
//     a steady write load), each with its write-ahead log file of the same
//     size mapped in memory. A memtable also bounds a transaction, which
//     applyBatch splits when it is too big;
//   - no block cache for an unencrypted store (see Open for an encrypted
//     one's, budget/8): its tables are not compressed, so a block read
//     in place from the mapped table is what the cache would hold, and
//     Badger would still look every block up in the cache, hash its key
//     and admit it (5% of the CPU of a GET person at 1M people, for a hit
//     rate of a few percent under random ids);
//   - no index cache: table indexes and Bloom filters stay in memory for
//     every table (a few MiB for millions of entities). A cache that
//     evicted them made every version check of a new entity, a lookup of a
//     missing key, read and decode them again: an encrypted store, which
//     needs the cache, gets budget/16;
//   - value log files of budget/4 (capped at Badger's 1 GiB default; the
//     values of this store are small and live in the tables, the value log
//     holds little), mapped in memory as Badger writes them;
//   - two compactors instead of four, each building tables in memory;
//   - no compression of the tables: Snappy's buffers were most of the heap
//     while compactions ran (over 200 MiB in a rebuild), and the records are
//     short. The tables are larger on disk and in the page cache; their
//     mapped pages are reclaimable, the heap is not;
//   - values above 1 MiB (or a smaller share of a small memtable) in the
//     value log rather than the tables, where no value of this store goes.
//
// That is 1/8 of the budget on the Go heap (5/16 for an encrypted store,
// with its block and index caches) and 1/8 in mapped files. The caller keeps the Go heap within 3/4 of the
// budget (a soft limit, see cmd/lookupd), which leaves the projector's
// version cache and pipeline and the API's requests at least 1/2; the last
// 1/4 is for the pages of the memory-mapped table files that reads touch.
// Those are not bounded by any of these options: Badger writes each table
// through its mapping and reads map whole runs of pages, so they grow to
// about the size of the tables that reads and compactions touch
// (docs/performance.md, "Memory": 550-600 MiB at 1M people and 1M
// signers). Under a container's memory limit the kernel reclaims them;
// adviseTables keeps a read that misses them from reading around.
func withMemoryBudget(o badger.Options, budget int64) (badger.Options, error) {
	if budget < MinMemoryBudget {
		return o, fmt.Errorf("memory budget %d bytes is below the minimum of %d", budget, MinMemoryBudget)
	}
	vlog := min(budget/4, o.ValueLogFileSize)
	// Badger wants a value to fit in a transaction, at most 15% of a
	// memtable; the values of this store are far smaller than either.
	threshold := min(o.ValueThreshold, budget/16*15/100/2)
	return o.
		WithValueThreshold(threshold).
		WithMemTableSize(budget / 16).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(8).
		WithBlockCacheSize(0).
		WithValueLogFileSize(vlog).
		WithNumCompactors(2).
		WithCompression(options.None), nil
}
