package settings

import "fmt"

// AutoBudget is the memory budget setting (LOOKUP_MEMORY_BUDGET=auto, the
// default) that has Size take the budget from the container's memory
// limit.
const AutoBudget int64 = -1

// DefaultBudget is the memory budget of Auto when the process runs under
// no memory limit: what a 256 MiB container gets.
const DefaultBudget int64 = 192 << 20

// MinBudget is the smallest budget Size gives: projector.MinMemoryBudget
// (a test of internal/settings holds the two equal).
const MinBudget int64 = 32 << 20

// Where a memory budget came from (Budget.Source).
const (
	BudgetFromSetting  = "setting"   // LOOKUP_MEMORY_BUDGET (or --memory-budget)
	BudgetFromCgroupV1 = "cgroup v1" // memory.limit_in_bytes of the process's cgroup or an ancestor
	BudgetFromCgroupV2 = "cgroup v2" // memory.max of the process's cgroup or an ancestor
	BudgetFromNone     = "none"      // no container limit: DefaultBudget
)

// Budget is the memory budget of a process: the bytes it is sized for
// (0: none, Badger's defaults and no soft limit), where they came from, and
// the container's memory limit they were sized from.
type Budget struct {
	Bytes  int64
	Source string // SourceSetting, SourceCgroupV1, SourceCgroupV2 or SourceNone
	// Limit is the container's memory limit in bytes; 0 when none was
	// found or it was not looked for (an explicit setting).
	Limit int64
	// Err is why the container's limit could not be read (Source is then
	// SourceNone); nil otherwise.
	Err error
}

// MemoryContainer reads the memory limit of the container the process runs in:
// the limit in bytes (0: none) and where it was read (SourceCgroupV1 or
// SourceCgroupV2). FromCgroup is the real one.
type MemoryContainer func() (limit int64, source string, err error)

// SizeBudget returns the memory budget of setting: setting itself (bytes, or 0
// for none) unless it is Auto; for Auto, 3/4 of the container's memory
// limit read by container, at least MinBudget, or DefaultBudget when there
// is no limit or it cannot be read.
//
// The budget is 3/4 of the limit because the limit (a cgroup's) counts the
// page cache of the process's files as well as its anonymous memory: the
// budget bounds the anonymous memory (3/4 of it is Go's soft memory limit,
// Soft), and the last 1/4 of the limit is left, with the budget's own last
// 1/4, to the pages of Badger's memory-mapped tables, which the kernel
// reclaims at the limit rather than kill the process. In a 256 MiB
// container: a budget of 192 MiB, a soft limit of 144 MiB.
func SizeBudget(setting int64, container MemoryContainer) Budget {
	if setting != AutoBudget {
		return Budget{Bytes: setting, Source: BudgetFromSetting}
	}
	limit, source, err := container()
	switch {
	case err != nil:
		return Budget{Bytes: DefaultBudget, Source: BudgetFromNone, Err: err}
	case limit <= 0:
		return Budget{Bytes: DefaultBudget, Source: BudgetFromNone}
	}
	return Budget{Bytes: max(limit/4*3, MinBudget), Source: source, Limit: limit}
}

// describe returns what b says about where it came from, for the log.
func (b Budget) describe() string {
	switch {
	case b.Source == BudgetFromSetting:
		return "LOOKUP_MEMORY_BUDGET"
	case b.Err != nil:
		return fmt.Sprintf("the default: the container's memory limit could not be read (%v)", b.Err)
	case b.Source == BudgetFromNone:
		return "the default: no container memory limit"
	}
	return "3/4 of the container's memory limit (" + b.Source + ")"
}
