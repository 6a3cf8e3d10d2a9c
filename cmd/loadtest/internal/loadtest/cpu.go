package loadtest

import (
	"time"

	"github.com/prometheus/procfs"
)

// clockTicks is the unit of the CPU times in /proc/<pid>/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTicks = 100

// ProcessCPU returns the CPU time (user and system) the process pid has
// used so far, from /proc/<pid>/stat; pid 0 is this process.
func ProcessCPU(pid int) (time.Duration, error) {
	var p procfs.Proc
	var err error
	if pid == 0 {
		p, err = procfs.Self()
	} else {
		p, err = procfs.NewProc(pid)
	}
	if err != nil {
		return 0, err
	}
	st, err := p.Stat()
	if err != nil {
		return 0, err
	}
	return time.Duration(st.UTime+st.STime) * time.Second / clockTicks, nil //nolint:gosec // G115: ticks of one process fit an int64
}
