package loadtest

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
)

// TreeCPU returns the CPU time (user and system) used so far by process
// pid and its live children, as ProcessCPU does for one: the CPU of a
// server that forks a process per connection, as postgres does. A child
// that exits between listing and reading is left out.
func TreeCPU(pid int) (time.Duration, error) {
	total, err := ProcessCPU(pid)
	if err != nil {
		return 0, err
	}
	kids, err := childPIDs(pid)
	if err != nil {
		return 0, err
	}
	for _, k := range kids {
		d, err := ProcessCPU(k)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, err
		}
		total += d
	}
	return total, nil
}

// childPIDs lists the processes whose parent is pid, from /proc/*/stat.
func childPIDs(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, e := range ents {
		k, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat") //nolint:gosec // G304: a /proc path built from a pid
		if err != nil {
			continue // exited meanwhile
		}
		if ppid, ok := parseStatPPID(string(b)); ok && ppid == pid {
			kids = append(kids, k)
		}
	}
	return kids, nil
}

// parseStatPPID reads the parent's pid (field 4) of a /proc/<pid>/stat
// line, counting fields from the last ')' as parseStatCPU does.
func parseStatPPID(stat string) (int, bool) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(f[1])
	return ppid, err == nil
}
