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
	if _, err := Options(badger.DefaultOptions(t.TempDir()), MinBudget-1); err == nil {
		t.Error("budget below the minimum accepted")
	}
}
