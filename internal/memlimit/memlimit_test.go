package memlimit

import (
	"math"
	"runtime/debug"
	"testing"
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
			if got := Soft(tt.budget, tt.started); got != tt.want {
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
	if Lifter(0) != nil {
		t.Fatal("Lifter(0) is not nil")
	}
	const limit = 1 << 40
	debug.SetMemoryLimit(limit)
	lift := Lifter(limit)
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
