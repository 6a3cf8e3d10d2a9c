package soak

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/settings"
)

// TestMain lets the test binary be a process in a cgroup (cgroupHelper)
// when LOADTEST_CGROUP_HELPER is set.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LOADTEST_CGROUP_HELPER"); mode != "" {
		os.Exit(cgroupHelper(mode))
	}
	os.Exit(m.Run())
}

// cgroupHelper is the test binary run inside a cgroup by TestCgroup: mode
// "limit" prints the memory limit memlimit reads and its source; "hog"
// touches 256 MiB of memory and exits 0 (if it is not killed first).
func cgroupHelper(mode string) int {
	switch mode {
	case "limit":
		limit, source, err := settings.FromCgroup()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("%d %s\n", limit, source)
		return 0
	case "hog":
		b := make([]byte, 256<<20)
		for i := range b {
			if i%4096 == 0 {
				b[i] = 1
			}
		}
		fmt.Println(len(b))
		return 0
	}
	return 2
}

// newTestCgroup makes a memory cgroup of limit bytes for t, removed at its
// end, or skips t where none can be made.
func newTestCgroup(t *testing.T, limit int64) *Cgroup {
	t.Helper()
	c, err := NewCgroup(fmt.Sprintf("loadtest-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-")), limit)
	if err != nil {
		t.Skipf("no memory cgroup can be made here (run as root where /sys/fs/cgroup is writable): %v", err)
	}
	t.Cleanup(func() {
		if err := c.Remove(); err != nil {
			t.Error(err)
		}
	})
	return c
}

// TestCgroup runs processes inside a memory cgroup: from birth (its
// cgroup.procs), reading its limit as lookupd does, and killed by the OOM
// killer past the limit, which Stat counts.
func TestCgroup(t *testing.T) {
	t.Run("a process is in it from birth", func(t *testing.T) {
		c := newTestCgroup(t, 0)
		out, err := c.Command("cat", "/proc/self/cgroup").Output()
		if err != nil {
			t.Fatal(err)
		}
		if name := filepath.Base(c.Dir); !strings.Contains(string(out), "/"+name+"\n") {
			t.Errorf("/proc/self/cgroup of the process:\n%s\nwant the cgroup %s in it", out, name)
		}
	})
	t.Run("the limit memlimit reads is the cgroup's", func(t *testing.T) {
		c := newTestCgroup(t, 300<<20)
		cmd := c.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "LOADTEST_CGROUP_HELPER=limit")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if got, want := strings.TrimSpace(string(out)), fmt.Sprintf("%d cgroup v%d", 300<<20, c.Version); got != want {
			t.Errorf("settings.FromCgroup inside the cgroup = %q, want %q", got, want)
		}
	})
	t.Run("past the limit the OOM killer kills it", func(t *testing.T) {
		c := newTestCgroup(t, 64<<20)
		cmd := c.Command(os.Args[0])
		cmd.Env = append(os.Environ(), "LOADTEST_CGROUP_HELPER=hog")
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Exited() {
			t.Errorf("a process touching 256 MiB in a 64 MiB cgroup ended with %v, want killed", err)
		}
		s, err := c.Stat()
		if err != nil {
			t.Fatal(err)
		}
		if s.OOMKills != 1 || s.LimitHits == 0 {
			t.Errorf("Stat = %+v, want 1 OOM kill and the limit hit", s)
		}
	})
}

// TestCgroupStat: Stat reads what a process in the cgroup is charged.
func TestCgroupStat(t *testing.T) {
	c := newTestCgroup(t, 0)
	cmd := c.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "LOADTEST_CGROUP_HELPER=hog")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	s, err := c.Stat()
	if err != nil {
		t.Fatal(err)
	}
	// The process has exited: its anonymous memory is gone, its page cache
	// (the test binary) may remain.
	if s.Anon != 0 || s.OOMKills != 0 || s.Usage < 0 {
		t.Errorf("Stat after the process = %+v, want no anonymous memory, no OOM kill", s)
	}
}

// TestCgroupMounts finds the memory hierarchy in mountinfo files of the
// kinds a machine has.
func TestCgroupMounts(t *testing.T) {
	const (
		v1 = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
		v2 = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
		cu = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	)
	tests := []struct {
		name           string
		mountinfo      string
		wantV1, wantV2 string
	}{
		{"hybrid", cu + v1 + v2, "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified"},
		{"v2 only", "30 23 0:26 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate\n", "", "/sys/fs/cgroup"},
		{"v1 without memory", cu, "", ""},
		{"none", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gotV1, gotV2 := cgroupMounts(tt.mountinfo)
			if gotV1.point != tt.wantV1 || gotV2.point != tt.wantV2 {
				t.Errorf("cgroupMounts = %q, %q; want %q, %q", gotV1.point, gotV2.point, tt.wantV1, tt.wantV2)
			}
		})
	}
}

// TestV1MemoryPath reads the memory cgroup of a /proc/<pid>/cgroup.
func TestV1MemoryPath(t *testing.T) {
	tests := []struct {
		name, file, want string
		ok               bool
	}{
		{"own", "9:name=systemd:/\n4:memory:/process_api/abc\n0::/\n", "/process_api/abc", true},
		{"shared with cpu", "3:cpu,memory:/x\n", "/x", true},
		{"v2 only", "0::/user.slice\n", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := v1MemoryPath(tt.file)
			if got != tt.want || ok != tt.ok {
				t.Errorf("v1MemoryPath = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestParseKeyed reads memory.stat and memory.events lines.
func TestParseKeyed(t *testing.T) {
	got, err := parseKeyed(strings.NewReader("anon 1024\nfile 2048\nworkingset_refault_file 7\nodd line here\nbad x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got["anon"] != 1024 || got["file"] != 2048 || refaults(got, "") != 7 || len(got) != 3 {
		t.Errorf("parseKeyed = %v", got)
	}
	if n := refaults(map[string]uint64{"total_workingset_refault": 5}, "total_"); n != 5 {
		t.Errorf("refaults of an older kernel = %d, want 5", n)
	}
}
