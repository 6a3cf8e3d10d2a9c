package projector

import "github.com/lookup/persons/internal/badgermem"

// MinMemoryBudget is the smallest StoreOptions.MemoryBudget Open accepts.
const MinMemoryBudget = badgermem.MinBudget

// withMemoryBudget sizes Badger's memory to budget bytes (see
// StoreOptions.MemoryBudget and internal/badgermem, shared with the
// accounting index). The pages of the memory-mapped table files that reads
// touch are bounded by none of its options: Badger writes each table
// through its mapping and reads map whole runs of pages, so they grow to
// about the size of the tables that reads and compactions touch
// (docs/performance.md, "Memory": 550-600 MiB at 1M people and 1M
// signers). Under a container's memory limit the kernel reclaims them;
// adviseTables keeps a read that misses them from reading around.
var withMemoryBudget = badgermem.Options
