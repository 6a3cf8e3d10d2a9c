package projector

import (
	"testing"

	"github.com/dgraph-io/badger/v4"
)

func TestWithMemoryBudget(t *testing.T) {
	const budget = 192 << 20
	o, err := withMemoryBudget(badger.DefaultOptions(t.TempDir()), budget)
	if err != nil {
		t.Fatal(err)
	}
	mem := o.MemTableSize*int64(o.NumMemtables) + o.BlockCacheSize + o.IndexCacheSize + o.ValueLogFileSize
	if mem > budget {
		t.Errorf("memtables, caches and value log take %d bytes, more than the budget %d", mem, budget)
	}
	if o.BlockCacheSize != 0 {
		t.Errorf("block cache of %d bytes for uncompressed tables, want none", o.BlockCacheSize)
	}
	if _, err := withMemoryBudget(badger.DefaultOptions(t.TempDir()), MinMemoryBudget-1); err == nil {
		t.Error("budget below the minimum accepted")
	}
}

func TestOpenWithMemoryBudget(t *testing.T) {
	for _, key := range [][]byte{nil, make([]byte, 32)} {
		s, err := Open(t.TempDir(), StoreOptions{MemoryBudget: MinMemoryBudget, EncryptionKey: key})
		if err != nil {
			t.Fatalf("Open (encrypted %v): %v", key != nil, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(t.TempDir(), StoreOptions{MemoryBudget: 1 << 20}); err == nil {
		t.Error("Open accepted a budget below the minimum")
	}
}
