package settings

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	aml "github.com/KimMachineGun/automemlimit/memlimit"
)

// procSelfCgroup lists the cgroups of this process, one line a hierarchy.
const procSelfCgroup = "/proc/self/cgroup"

// FromCgroup is the Container of this process: the memory limit of its
// cgroup, the smallest of it and its ancestors', as automemlimit reads it
// (cgroup v1: memory.limit_in_bytes and hierarchical_memory_limit, where
// the kernel's "no limit" is a huge number; cgroup v2: memory.max, "max"
// for none), and which version it is. No limit, no cgroup or no cgroups on
// this system is a limit of 0 and no error.
func FromCgroup() (int64, string, error) {
	limit, err := aml.FromCgroup()
	switch {
	case errors.Is(err, aml.ErrNoLimit), errors.Is(err, aml.ErrNoCgroup), errors.Is(err, aml.ErrCgroupsNotSupported):
		return 0, "", nil
	case err != nil:
		return 0, "", err
	}
	f, err := os.Open(procSelfCgroup)
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	source, err := cgroupVersion(f)
	if err != nil {
		return 0, "", err
	}
	return int64(min(limit, math.MaxInt64)), source, nil //nolint:gosec // G115: at most MaxInt64
}

// cgroupVersion reads a /proc/<pid>/cgroup file ("id:controllers:path"
// lines) and returns the version of the hierarchy whose memory controller
// governs the process, the way automemlimit picks it: cgroup v1 when a v1
// hierarchy (id not 0) lists "memory", else cgroup v2 when the unified
// hierarchy ("0::path") is there.
func cgroupVersion(r io.Reader) (string, error) {
	v2 := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		id, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		controllers, _, ok := strings.Cut(rest, ":")
		switch {
		case !ok:
		case id != "0" && slices.Contains(strings.Split(controllers, ","), "memory"):
			return BudgetFromCgroupV1, nil
		case id == "0" && controllers == "":
			v2 = true
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	if !v2 {
		return "", errors.New(procSelfCgroup + " names no memory cgroup")
	}
	return BudgetFromCgroupV2, nil
}
