package loadtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Machine describes where and when the figures were measured.
type Machine struct {
	When    time.Time
	CPUs    int
	Model   string // CPU model name, "" when unknown
	LoadAvg string // 1-minute load average at the start, "" when unknown
	Memory  string // MemTotal of /proc/meminfo, "" when unknown
	Lookupd string // "lookupd version" output
}

// ReadMachine describes this machine now, and the lookupd binary bin.
func ReadMachine(ctx context.Context, bin string) Machine {
	m := Machine{When: time.Now().UTC(), CPUs: runtime.NumCPU()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.Model = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
				if kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
					m.Memory = fmt.Sprintf("%.1f GiB of memory", float64(kb)/(1<<20))
				}
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.LoadAvg = f[0]
		}
	}
	m.Lookupd = LookupdVersion(ctx, bin)
	return m
}

// LookupdVersion returns what "bin version" prints, "" on failure.
func LookupdVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
}

// Describe writes the paragraph saying where and when the figures were
// measured, ending with where (what else ran on the machine).
func (m Machine) Describe(w io.Writer, where string) {
	cpu := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.Model != "" {
		cpu += " (" + m.Model + ")"
	}
	if m.Memory != "" {
		cpu += ", " + m.Memory
	}
	fmt.Fprintf(w, "Machine: %s, %s/%s, load average %s at the start; %s; %s.\n\n",
		cpu, runtime.GOOS, runtime.GOARCH, orUnknown(m.LoadAvg), orUnknown(m.Lookupd), where)
}

// Millis formats a latency in milliseconds with two decimals.
func Millis(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// MiB is a mebibyte: memory figures are in MiB.
const MiB = 1 << 20

// MiBs formats bytes as MiB with one decimal ("n/a" when negative:
// unknown).
func MiBs(b int64) string {
	if b < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(b)/MiB)
}
