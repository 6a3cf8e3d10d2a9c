package settings

import (
	"errors"
	"testing"
)

// TestSize: an explicit setting stands; auto is 3/4 of the container's
// limit, at least MinBudget, and the default without a limit or when the
// limit cannot be read.
func TestSize(t *testing.T) {
	limit := func(n int64, source string) MemoryContainer {
		return func() (int64, string, error) { return n, source, nil }
	}
	unread := errors.New("permission denied")
	tests := []struct {
		name      string
		setting   int64
		container MemoryContainer
		want      Budget
	}{
		{"setting", 512 << 20, limit(256<<20, BudgetFromCgroupV1), Budget{Bytes: 512 << 20, Source: BudgetFromSetting}},
		{"setting of none", 0, limit(256<<20, BudgetFromCgroupV2), Budget{Bytes: 0, Source: BudgetFromSetting}},
		{"cgroup v1, 256 MiB", AutoBudget, limit(256<<20, BudgetFromCgroupV1), Budget{Bytes: 192 << 20, Source: BudgetFromCgroupV1, Limit: 256 << 20}},
		{"cgroup v2, 1 GiB", AutoBudget, limit(1<<30, BudgetFromCgroupV2), Budget{Bytes: 768 << 20, Source: BudgetFromCgroupV2, Limit: 1 << 30}},
		{"limit not a multiple of 4", AutoBudget, limit(1001, BudgetFromCgroupV2), Budget{Bytes: MinBudget, Source: BudgetFromCgroupV2, Limit: 1001}},
		{"small container", AutoBudget, limit(40<<20, BudgetFromCgroupV1), Budget{Bytes: MinBudget, Source: BudgetFromCgroupV1, Limit: 40 << 20}},
		{"no limit", AutoBudget, limit(0, ""), Budget{Bytes: DefaultBudget, Source: BudgetFromNone}},
		{"limit unread", AutoBudget, func() (int64, string, error) { return 0, "", unread }, Budget{Bytes: DefaultBudget, Source: BudgetFromNone, Err: unread}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SizeBudget(tt.setting, tt.container); got != tt.want {
				t.Errorf("Size(%d) = %+v, want %+v", tt.setting, got, tt.want)
			}
		})
	}
}

// TestSizeLooksOnlyForAuto: an explicit setting does not read the
// container's limit.
func TestSizeLooksOnlyForAuto(t *testing.T) {
	read := false
	SizeBudget(64<<20, func() (int64, string, error) { read = true; return 0, "", nil })
	if read {
		t.Error("Size read the container's limit for an explicit setting")
	}
}
