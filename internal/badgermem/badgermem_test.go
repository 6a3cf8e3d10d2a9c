package badgermem

import (
	"testing"

	"github.com/dgraph-io/badger/v4"
)

func TestOptions(t *testing.T) {
	const budget = 192 << 20
	o, err := Options(badger.DefaultOptions(t.TempDir()), budget)
	if err != nil {
		t.Fatal(err)
	}
	mem := o.MemTableSize*int64(o.NumMemtables) + o.BlockCacheSize + o.IndexCacheSize + o.ValueLogFileSize
	if mem > budget/2 {
		t.Errorf("memtables, caches and value log take %d bytes, more than half the budget %d", mem, budget)
	}
	if o.BlockCacheSize != 0 {
		t.Errorf("block cache of %d bytes for uncompressed tables, want none", o.BlockCacheSize)
	}
	if o.ValueThreshold*100/o.MemTableSize > 15 {
		t.Errorf("value threshold %d is over 15%% of a memtable of %d", o.ValueThreshold, o.MemTableSize)
	}
	// A builder's first buffer is twice its table's size: a table of any
	// level, and one a memtable flushes, must fit in it.
	if o.TableSizeMultiplier != 1 || 2*o.BaseTableSize < o.MemTableSize {
		t.Errorf("tables of %d bytes, x%d a level, for memtables of %d: a builder's first buffer (2x) does not hold every table",
			o.BaseTableSize, o.TableSizeMultiplier, o.MemTableSize)
	}
	if _, err := Options(badger.DefaultOptions(t.TempDir()), MinBudget-1); err == nil {
		t.Error("budget below the minimum accepted")
	}
}
