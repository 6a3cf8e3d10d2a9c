package pgyardstick

import (
	"errors"
	"io/fs"
	"time"

	"github.com/prometheus/procfs"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// TreeCPU returns the CPU time (user and system) used so far by process
// pid and its live children, as ProcessCPU does for one: the CPU of a
// server that forks a process per connection, as postgres does. A child
// that exits between listing and reading is left out.
func TreeCPU(pid int) (time.Duration, error) {
	total, err := loadtest.ProcessCPU(pid)
	if err != nil {
		return 0, err
	}
	kids, err := childPIDs(pid)
	if err != nil {
		return 0, err
	}
	for _, k := range kids {
		d, err := loadtest.ProcessCPU(k)
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
	procs, err := procfs.AllProcs()
	if err != nil {
		return nil, err
	}
	var kids []int
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil {
			continue // exited meanwhile
		}
		if st.PPID == pid {
			kids = append(kids, p.PID)
		}
	}
	return kids, nil
}
