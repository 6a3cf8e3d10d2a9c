package loadtest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
)

// ProcMem is the memory of a process as Linux accounts it, in bytes.
type ProcMem struct {
	// From /proc/<pid>/status: VmRSS, RssAnon, RssFile, RssShmem, VmHWM
	// (the peak RSS since the process started).
	RSS, Anon, File, Shmem, HWM int64
	// Resident pages of the memory-mapped files, by kind (/proc/<pid>/smaps,
	// of which smaps_rollup is the sum): Badger's tables (.sst), memtables'
	// write-ahead logs (.mem), value log (.vlog) and any other file
	// (executable, libraries).
	Tables, Memtables, ValueLog, OtherFiles int64
}

// ReadProcMem reads the memory of process pid from /proc.
func ReadProcMem(pid int) (ProcMem, error) {
	var m ProcMem
	p, err := procfs.NewProc(pid)
	if err != nil {
		return m, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return m, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	m.RSS, m.Anon, m.File, m.Shmem, m.HWM = signed(st.VmRSS), signed(st.RssAnon), signed(st.RssFile), signed(st.RssShmem), signed(st.VmHWM)
	smaps, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "smaps"))
	if err != nil {
		return m, err
	}
	files, err := parseSmaps(bytes.NewReader(smaps))
	if err != nil {
		return m, fmt.Errorf("/proc/%d/smaps: %w", pid, err)
	}
	m.Tables, m.Memtables, m.ValueLog, m.OtherFiles = files[".sst"], files[".mem"], files[".vlog"], files[""]
	return m, nil
}

// ReadPeakRSS reads the peak resident set of process pid (VmHWM) alone,
// cheaply enough to sample it often (ReadProcMem also reads smaps).
func ReadPeakRSS(pid int) (int64, error) {
	p, err := procfs.NewProc(pid)
	if err != nil {
		return 0, err
	}
	st, err := p.NewStatus()
	if err != nil {
		return 0, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return signed(st.VmHWM), nil
}

// signed returns bytes of memory as an int64.
func signed(b uint64) int64 { return int64(b) } //nolint:gosec // G115: a process's memory fits an int64

// kbLine parses one line "Name:   123 kB" into the name and the bytes.
func kbLine(line string) (string, int64, bool) {
	name, rest, ok := strings.Cut(line, ":")
	if !ok {
		return "", 0, false
	}
	f := strings.Fields(rest)
	if len(f) != 2 || f[1] != "kB" {
		return "", 0, false
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return name, n << 10, true
}

// parseSmaps reads /proc/<pid>/smaps and returns the resident bytes (Rss)
// of the file mappings by the file's kind: its extension among ".sst",
// ".mem" and ".vlog", "" for any other file. Anonymous mappings (no path,
// or a pseudo-path such as [heap]) are not counted.
func parseSmaps(r io.Reader) (map[string]int64, error) {
	out := map[string]int64{}
	kind, file := "", false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") { // a mapping's header: range perms offset dev inode [path]
			kind, file = mappingKind(f)
			continue
		}
		if f[0] == "Rss:" && file {
			if _, n, ok := kbLine(line); ok {
				out[kind] += n
			}
		}
	}
	return out, sc.Err()
}

// mappingKind returns the kind of the mapping whose smaps header has the
// fields f, and whether it maps a file.
func mappingKind(f []string) (kind string, file bool) {
	if len(f) < 6 {
		return "", false
	}
	path := strings.TrimSuffix(strings.Join(f[5:], " "), " (deleted)")
	if !strings.HasPrefix(path, "/") {
		return "", false // [heap], [stack], [vdso], ...
	}
	switch ext := filepath.Ext(path); ext {
	case ".sst", ".mem", ".vlog":
		return ext, true
	}
	return "", true
}
