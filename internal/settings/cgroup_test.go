package settings

import (
	"os"
	"strings"
	"testing"
)

// TestCgroupVersion reads /proc/<pid>/cgroup files of the kinds a
// container has.
func TestCgroupVersion(t *testing.T) {
	tests := []struct {
		name, file, want string
	}{
		{"cgroup v2", "0::/kubepods/pod1/abc\n", BudgetFromCgroupV2},
		{"cgroup v1", "12:pids:/docker/abc\n4:memory:/docker/abc\n1:cpu,cpuacct:/docker/abc\n", BudgetFromCgroupV1},
		{"v1 memory among others", "3:cpuset,memory:/x\n", BudgetFromCgroupV1},
		{"hybrid: v1 memory wins", "4:memory:/process_api/x\n1:cpu:/\n0::/\n", BudgetFromCgroupV1},
		{"hybrid without v1 memory", "1:cpu:/\n0::/user.slice\n", BudgetFromCgroupV2},
		{"named v1 hierarchy only", "1:name=systemd:/\n", ""},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := cgroupVersion(strings.NewReader(tt.file))
			if tt.want == "" {
				if err == nil {
					t.Errorf("cgroupVersion = %q, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("cgroupVersion = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestFromCgroupHere reads this process's limit: no error, and a limit
// only with a version. (The load tool's cgroup tests,
// cmd/loadtest/internal/loadtest, run a process in a cgroup with a limit
// and check what it reads.)
func TestFromCgroupHere(t *testing.T) {
	if _, err := os.Stat(procSelfCgroup); err != nil {
		t.Skipf("no %s: not Linux", procSelfCgroup)
	}
	limit, source, err := FromCgroup()
	if err != nil {
		t.Fatalf("FromCgroup: %v", err)
	}
	if limit > 0 && source != BudgetFromCgroupV1 && source != BudgetFromCgroupV2 {
		t.Errorf("FromCgroup = %d from %q, want a cgroup version", limit, source)
	}
	t.Logf("this process: limit %d bytes (%q)", limit, source)
}
