// Package badgermem sizes a Badger store's memory to a budget: the one
// sizing of the read model of persons (projector) and of the accounting
// index (internal/accounting), both written in bulk by one writer and read
// by point lookups or short ranges, both under LOOKUP_MEMORY_BUDGET.
package badgermem

import (
	"fmt"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// MinBudget is the smallest budget Options accepts.
const MinBudget = 32 << 20

// Options returns o with Badger's memory sized to budget bytes:
//
//   - memtables: two of budget/32 each (Badger's default is up to five of
//     64 MiB, which made a process grow by hundreds of MiB under a steady
//     write load), each with its write-ahead log file of the same size
//     mapped in memory. A memtable also bounds a transaction, which the
//     writers split when it is too big;
//   - tables of 5/8 of a memtable at every level (Badger's default: 2 MiB
//     doubling at each level below the first). Badger builds a table in
//     buffers on the Go heap, the first twice the table size and each next
//     one twice the last, and keeps up to eight builders' buffers for the
//     next tables. With its defaults the flushes of memtables grew theirs
//     to 28 MiB and compactions built 16 MiB ones: 130-200 MiB of heap
//     while the read model was built, over the soft limit, so that the
//     collector ran all the time and the runtime kept returning memory to
//     the kernel and taking it back. Now any table fits its builder's first
//     buffer (budget/26 at most), and the heap stays near the soft limit;
//   - no compression of the tables: Snappy's buffers were most of the heap
//     while compactions ran (over 200 MiB in a rebuild of the read model,
//     over a gigabyte building an index of ten million records). The
//     tables are larger on disk and in the page cache; their mapped pages
//     are reclaimable, the heap is not;
//   - hence no block cache: a block of an uncompressed, unencrypted table is
//     read in place from its mapping, and Badger would still look every
//     block up in the cache, hash its key and admit it (5% of the CPU of a
//     GET person at 1M people, for a hit rate of a few percent under random
//     ids). An encrypted store needs one: its caller sets it;
//   - no index cache: table indexes and Bloom filters stay in memory for
//     every table (a few MiB for millions of keys). A cache that evicted
//     them made every lookup of a missing key read and decode them again;
//   - value log files of budget/4 (capped at Badger's 1 GiB default); values
//     above a small share of a memtable go to the value log, which no value
//     of these stores is near;
//   - two compactors instead of four, each building tables in memory;
//   - level 0 merged into the next level once two tables wait (writes
//     stall at eight). The read model of persons lets 15 wait instead
//     (projector's Open): with random ids a merge rewrites all of the
//     next level, and its reads are point reads.
//
// On the Go heap that is the memtables (1/16 of the budget) and, while
// tables are written, their builders (budget/26 each, a few at once);
// mapped, the write-ahead logs (1/16) and a value log file (1/4). The
// caller keeps the Go heap within 3/4 of the budget (internal/settings),
// which leaves the writer, its caches and the requests the rest of it;
// the last 1/4 is for the pages of the mapped table files that reads
// touch.
func Options(o badger.Options, budget int64) (badger.Options, error) {
	if budget < MinBudget {
		return o, fmt.Errorf("memory budget %d bytes is below the minimum of %d", budget, MinBudget)
	}
	memtable := budget / 32
	// Badger wants a value to fit in a transaction, at most 15% of a
	// memtable; the values of these stores are far smaller than either.
	threshold := min(o.ValueThreshold, memtable*15/100/2)
	o.TableSizeMultiplier = 1 // no WithTableSizeMultiplier in badger/v4
	return o.
		WithValueThreshold(threshold).
		WithMemTableSize(memtable).
		WithNumMemtables(2).
		WithNumLevelZeroTables(2).
		WithNumLevelZeroTablesStall(8).
		WithBlockCacheSize(0).
		WithIndexCacheSize(0).
		WithValueLogFileSize(min(budget/4, o.ValueLogFileSize)).
		WithNumCompactors(2).
		WithBaseTableSize(memtable * 5 / 8).
		WithCompression(options.None), nil
}
