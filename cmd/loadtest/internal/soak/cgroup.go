package soak

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Cgroup is a memory cgroup made for a process of a soak: its directory,
// the cgroup version (1 or 2) and its memory limit.
type Cgroup struct {
	Dir     string
	Version int
	Limit   int64 // bytes; 0: no limit
}

// CgroupStat is what a memory cgroup accounts: bytes now, and events
// since it was made.
type CgroupStat struct {
	Anon  int64 // anonymous memory (v1 total_rss, v2 anon)
	File  int64 // page cache charged to it (v1 total_cache, v2 file)
	Usage int64 // all it is charged (v1 memory.usage_in_bytes, v2 memory.current)
	// Refaults are the file pages read again soon after the kernel evicted
	// them (workingset_refault_file): the page cache thrashing.
	Refaults uint64
	OOMKills uint64 // processes killed by the OOM killer (v1 memory.oom_control, v2 memory.events)
	// LimitHits counts the charges that met the limit (v1 memory.failcnt,
	// v2 memory.events "max"): reclaim the limit forced.
	LimitHits uint64
}

// memoryHierarchy is where new memory cgroups go: the version and the
// directory to make them in.
type memoryHierarchy struct {
	version int
	parent  string
}

// NewCgroup makes a memory cgroup named name with limit bytes (0: none).
// Under cgroup v1 it is a child of this process's own memory cgroup (so
// that any limit of its own still holds); under cgroup v2 a child of the
// hierarchy's root as mounted here, whose cgroup.subtree_control gets
// "+memory". It fails, saying why, where neither can be written (not root,
// a read-only /sys/fs/cgroup, no memory controller).
func NewCgroup(name string, limit int64) (*Cgroup, error) {
	h, err := findMemoryHierarchy("/proc/self/mountinfo", "/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("no memory cgroup to make one in: %w", err)
	}
	if h.version == 2 {
		err := os.WriteFile(filepath.Join(h.parent, "cgroup.subtree_control"), []byte("+memory"), 0o644) //nolint:gosec // G306: a cgroup file
		if err != nil {
			return nil, fmt.Errorf("enable the memory controller under %s (cgroup v2; run as root with it writable): %w", h.parent, err)
		}
	}
	c := &Cgroup{Dir: filepath.Join(h.parent, name), Version: h.version, Limit: limit}
	if err := os.Mkdir(c.Dir, 0o755); err != nil { //nolint:gosec // G301: a cgroup directory
		return nil, fmt.Errorf("make a memory cgroup in %s (cgroup v%d; run as root with it writable): %w", h.parent, h.version, err)
	}
	if limit > 0 {
		file := "memory.max"
		if h.version == 1 {
			file = "memory.limit_in_bytes"
		}
		if err := os.WriteFile(filepath.Join(c.Dir, file), []byte(strconv.FormatInt(limit, 10)), 0o644); err != nil { //nolint:gosec // G306: a cgroup file
			_ = os.Remove(c.Dir)
			return nil, fmt.Errorf("set the memory limit of %s: %w", c.Dir, err)
		}
	}
	return c, nil
}

// Command returns the command that runs name with args inside c from its
// birth: a shell writes its own pid to c's cgroup.procs, then execs name
// (the same process: its pid is the command's).
func (c *Cgroup) Command(name string, args ...string) *exec.Cmd {
	sh := []string{"-c", `echo $$ > "$0" && exec "$@"`, filepath.Join(c.Dir, "cgroup.procs"), name}
	return exec.Command("/bin/sh", append(sh, args...)...) //nolint:gosec // G204: the caller's command
}

// Stat reads what c accounts.
func (c *Cgroup) Stat() (CgroupStat, error) {
	if c.Version == 1 {
		return statV1(c.Dir)
	}
	return statV2(c.Dir)
}

// statV1 reads a cgroup v1 memory cgroup's accounting in dir.
func statV1(dir string) (CgroupStat, error) {
	stat, err := readKeyed(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return CgroupStat{}, err
	}
	oom, err := readKeyed(filepath.Join(dir, "memory.oom_control"))
	if err != nil {
		return CgroupStat{}, err
	}
	usage, err := readNumber(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return CgroupStat{}, err
	}
	failcnt, err := readNumber(filepath.Join(dir, "memory.failcnt"))
	if err != nil {
		return CgroupStat{}, err
	}
	return CgroupStat{Anon: int64(stat["total_rss"]), File: int64(stat["total_cache"]), Usage: int64(usage), //nolint:gosec // G115: bytes of memory
		Refaults: refaults(stat, "total_"), OOMKills: oom["oom_kill"], LimitHits: failcnt}, nil
}

// statV2 reads a cgroup v2 memory cgroup's accounting in dir.
func statV2(dir string) (CgroupStat, error) {
	stat, err := readKeyed(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return CgroupStat{}, err
	}
	events, err := readKeyed(filepath.Join(dir, "memory.events"))
	if err != nil {
		return CgroupStat{}, err
	}
	usage, err := readNumber(filepath.Join(dir, "memory.current"))
	if err != nil {
		return CgroupStat{}, err
	}
	return CgroupStat{Anon: int64(stat["anon"]), File: int64(stat["file"]), Usage: int64(usage), //nolint:gosec // G115: bytes of memory
		Refaults: refaults(stat, ""), OOMKills: events["oom_kill"], LimitHits: events["max"]}, nil
}

// refaults returns the file refaults of a memory.stat whose keys have
// prefix: workingset_refault_file (Linux 5.9 and later), else
// workingset_refault.
func refaults(stat map[string]uint64, prefix string) uint64 {
	if n, ok := stat[prefix+"workingset_refault_file"]; ok {
		return n
	}
	return stat[prefix+"workingset_refault"]
}

// Remove removes c once the processes in it have exited, waiting up to 10
// seconds for the kernel to let go of it.
func (c *Cgroup) Remove() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := os.Remove(c.Dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove the cgroup %s: %w", c.Dir, err)
		}
		time.Sleep(50 * time.Millisecond) // polled: the exit is the kernel's
	}
}

// readKeyed reads a file of "key value" lines (memory.stat, memory.events,
// memory.oom_control).
func readKeyed(path string) (map[string]uint64, error) {
	f, err := os.Open(path) //nolint:gosec // G304: a cgroup file
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m, err := parseKeyed(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// parseKeyed parses "key value" lines into a map; lines of another shape
// are skipped.
func parseKeyed(r io.Reader) (map[string]uint64, error) {
	out := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 2 {
			continue
		}
		if n, err := strconv.ParseUint(f[1], 10, 64); err == nil {
			out[f[0]] = n
		}
	}
	return out, sc.Err()
}

// readNumber reads a file holding one number.
func readNumber(path string) (uint64, error) {
	b, err := os.ReadFile(path) //nolint:gosec // G304: a cgroup file
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}

// findMemoryHierarchy finds, from a /proc/<pid>/mountinfo and
// /proc/<pid>/cgroup, where to make memory cgroups: under cgroup v1, the
// process's own cgroup of the hierarchy mounted with the memory controller;
// else under cgroup v2, the root of the unified hierarchy as mounted when
// its cgroup.controllers lists memory.
func findMemoryHierarchy(mountinfo, cgroupFile string) (memoryHierarchy, error) {
	mi, err := os.ReadFile(mountinfo) //nolint:gosec // G304: a /proc file
	if err != nil {
		return memoryHierarchy{}, err
	}
	v1, v2 := cgroupMounts(string(mi))
	if v1.point != "" {
		cg, err := os.ReadFile(cgroupFile) //nolint:gosec // G304: a /proc file
		if err != nil {
			return memoryHierarchy{}, err
		}
		rel, ok := v1MemoryPath(string(cg))
		if !ok {
			return memoryHierarchy{}, fmt.Errorf("%s names no cgroup v1 memory hierarchy, though one is mounted at %s", cgroupFile, v1.point)
		}
		rel, ok = strings.CutPrefix(rel, strings.TrimSuffix(v1.root, "/"))
		if !ok {
			return memoryHierarchy{}, fmt.Errorf("this process's memory cgroup is outside the mount at %s", v1.point)
		}
		return memoryHierarchy{version: 1, parent: filepath.Join(v1.point, rel)}, nil
	}
	if v2.point == "" {
		return memoryHierarchy{}, errors.New("neither a cgroup v1 memory hierarchy nor cgroup v2 is mounted")
	}
	ctl, err := os.ReadFile(filepath.Join(v2.point, "cgroup.controllers"))
	if err != nil {
		return memoryHierarchy{}, err
	}
	if !slices.Contains(strings.Fields(string(ctl)), "memory") {
		return memoryHierarchy{}, fmt.Errorf("cgroup v2 at %s has no memory controller", v2.point)
	}
	return memoryHierarchy{version: 2, parent: v2.point}, nil
}

// cgroupMount is a cgroup file system's mount point and the cgroup it
// shows as its root.
type cgroupMount struct{ point, root string }

// cgroupMounts returns, from a mountinfo, the first cgroup v1 mount with
// the memory controller and the first cgroup v2 mount.
func cgroupMounts(mountinfo string) (v1, v2 cgroupMount) {
	for line := range strings.Lines(mountinfo) {
		f := strings.Fields(line)
		sep := slices.Index(f, "-")
		if sep < 5 || len(f) < sep+4 {
			continue
		}
		m := cgroupMount{point: f[4], root: f[3]}
		switch fstype, super := f[sep+1], f[sep+3]; {
		case fstype == "cgroup" && v1.point == "" && slices.Contains(strings.Split(super, ","), "memory"):
			v1 = m
		case fstype == "cgroup2" && v2.point == "":
			v2 = m
		}
	}
	return v1, v2
}

// v1MemoryPath returns the path of the cgroup v1 memory hierarchy in a
// /proc/<pid>/cgroup file ("id:controllers:path").
func v1MemoryPath(cgroupFile string) (string, bool) {
	for line := range strings.Lines(cgroupFile) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) == 3 && parts[0] != "0" && slices.Contains(strings.Split(parts[1], ","), "memory") {
			return parts[2], true
		}
	}
	return "", false
}
