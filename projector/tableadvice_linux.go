package projector

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lookup/persons/internal/crash"
	"golang.org/x/sys/unix"
)

// tableAdviceEvery is how often the mappings of new tables are advised.
const tableAdviceEvery = time.Second

// adviseTables marks the memory mappings of the store's table files (.sst
// under dir) as read at random (madvise MADV_RANDOM), now and then every
// tableAdviceEvery for the tables compactions make, until the returned
// function is called (it waits for the last pass; a second call does
// nothing more).
//
// Badger reads its tables through memory mappings, and a read that misses
// the page cache makes the kernel read around the page: as much as the
// device's readahead (read_ahead_kb; 8 MiB on some virtual disks) for a
// lookup that needs one 4 KiB block. Under a container's memory limit,
// where the tables do not all fit in the page cache, that evicts as much
// as it reads and every lookup misses again (make soak: millions of
// refaults a minute, lookups at a tenth of their rate). MADV_RANDOM turns
// the read-around off for those mappings. It is advice only: a mapping
// gone (a table compacted away) or replaced between the read of
// /proc/self/maps and the call is at worst advised in vain.
func adviseTables(dir string) func() {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return func() {}
	}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		defer crash.Guard()
		advised := map[string]bool{}
		t := time.NewTicker(tableAdviceEvery)
		defer t.Stop()
		for {
			advised = adviseTableMappings(abs+string(filepath.Separator), advised)
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() { close(stop) })
		<-done
	}
}

// adviseTableMappings advises MADV_RANDOM for each mapping of a .sst file
// under prefix in /proc/self/maps not in advised (by its address range and
// inode), and returns the mappings seen, advised now or before.
func adviseTableMappings(prefix string, advised map[string]bool) map[string]bool {
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return advised
	}
	seen := make(map[string]bool, len(advised))
	sc := bufio.NewScanner(bytes.NewReader(maps))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		start, end, id, ok := tableMapping(sc.Text(), prefix)
		if !ok {
			continue
		}
		seen[id] = true
		if !advised[id] {
			// Errors are ignored: see adviseTables.
			_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, end-start, unix.MADV_RANDOM)
		}
	}
	return seen
}

// tableMapping parses a line of /proc/self/maps ("start-end perms offset
// dev inode path") and returns the range of a mapping of a .sst file under
// prefix, and an id of the mapping (range and inode); ok is false for any
// other line.
func tableMapping(line, prefix string) (start, end uintptr, id string, ok bool) {
	f := strings.Fields(line)
	if len(f) < 6 || !strings.HasPrefix(f[5], prefix) || !strings.HasSuffix(f[5], ".sst") {
		return 0, 0, "", false
	}
	lo, hi, found := strings.Cut(f[0], "-")
	if !found {
		return 0, 0, "", false
	}
	s, err1 := strconv.ParseUint(lo, 16, 64)
	e, err2 := strconv.ParseUint(hi, 16, 64)
	if err1 != nil || err2 != nil || e <= s {
		return 0, 0, "", false
	}
	return uintptr(s), uintptr(e), f[0] + " " + f[4], true
}
