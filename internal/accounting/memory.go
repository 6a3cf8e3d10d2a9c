package accounting

import "github.com/lookup/persons/internal/badgermem"

// MinMemoryBudget is the smallest Options.MemoryBudget Open accepts.
const MinMemoryBudget = badgermem.MinBudget

// withMemoryBudget sizes Badger's memory to budget bytes
// (Options.MemoryBudget) as the read model of persons is sized
// (internal/badgermem), for a store that is written in bulk while it
// catches up with the ledger and read a range at a time. Its values are
// compact already (value.go).
var withMemoryBudget = badgermem.Options
