package settings

import (
	"errors"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestSoft checks that 3/4 of the memory budget is the Go soft memory
// limit, none without a budget, and that a limit the process started with
// (GOMEMLIMIT) stands.
func TestSoft(t *testing.T) {
	tests := []struct {
		name    string
		budget  int64
		started int64
		want    int64
	}{
		{"default budget", 192 << 20, math.MaxInt64, 144 << 20},
		{"no budget", 0, math.MaxInt64, 0},
		{"GOMEMLIMIT set", 192 << 20, 900 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SoftMemoryLimit(tt.budget, tt.started); got != tt.want {
				t.Errorf("Soft(budget %d, started with %d) = %d, want %d", tt.budget, tt.started, got, tt.want)
			}
		})
	}
}

// TestLifter: the limit is lifted while any restore or rebuild runs, and
// set back once the last one ends.
func TestLifter(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	if MemoryLimitLifter(0) != nil {
		t.Fatal("Lifter(0) is not nil")
	}
	const limit = 1 << 40
	debug.SetMemoryLimit(limit)
	lift := MemoryLimitLifter(limit)
	steps := []struct {
		building bool
		want     int64
	}{{true, math.MaxInt64}, {true, math.MaxInt64}, {false, math.MaxInt64}, {false, limit}}
	for i, s := range steps {
		lift(s.building)
		if got := debug.SetMemoryLimit(-1); got != s.want {
			t.Errorf("step %d (building %v): limit %d, want %d", i, s.building, got, s.want)
		}
	}
}

// TestApplyLogs: one line says the budget, where it came from and the soft
// limit set; a limit that could not be read is a warning.
func TestApplyLogs(t *testing.T) {
	if MemoryLimitAtStart != math.MaxInt64 {
		t.Skip("GOMEMLIMIT is set for this test process")
	}
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	tests := []struct {
		name  string
		b     Budget
		limit int64
		want  []string
	}{
		{"cgroup v1", Budget{Bytes: 192 << 20, Source: BudgetFromCgroupV1, Limit: 256 << 20}, 144 << 20,
			[]string{`level=INFO msg="memory budget" memory_budget=201326592 source="cgroup v1"`, "container_limit=268435456", "go_memory_limit=150994944"}},
		{"setting", Budget{Bytes: 1 << 30, Source: BudgetFromSetting}, 768 << 20,
			[]string{"source=setting", "from=LOOKUP_MEMORY_BUDGET", "go_memory_limit=805306368"}},
		{"unread", Budget{Bytes: DefaultBudget, Source: BudgetFromNone, Err: errors.New("denied")}, 144 << 20,
			[]string{"level=WARN", "source=none", "could not be read (denied)"}},
		{"none", Budget{Source: BudgetFromSetting}, 0, []string{`go_memory_limit_from="none: no memory budget"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, buf := testkit.TextLogger()
			if got := ApplyBudget(tt.b, logger); got != tt.limit {
				t.Errorf("Apply = %d, want %d", got, tt.limit)
			}
			for _, w := range tt.want {
				if !strings.Contains(buf.String(), w) {
					t.Errorf("log %q lacks %q", buf.String(), w)
				}
			}
		})
	}
}
