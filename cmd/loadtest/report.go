package main

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

// machine describes where and when the figures were measured.
type machine struct {
	When    time.Time
	CPUs    int
	Model   string // CPU model name, "" when unknown
	LoadAvg string // 1-minute load average at the start, "" when unknown
	Memory  string // MemTotal of /proc/meminfo, "" when unknown
	Lookupd string // "lookupd version" output
}

func readMachine(ctx context.Context, bin string) machine {
	m := machine{When: time.Now().UTC(), CPUs: runtime.NumCPU()}
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
	m.Lookupd = lookupdVersion(ctx, bin)
	return m
}

// lookupdVersion returns what "bin version" prints, "" on failure.
func lookupdVersion(ctx context.Context, bin string) string {
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return ""
	}
	return string(bytes.TrimSpace(out))
}

// describe writes the paragraph saying where and when the figures were
// measured, ending with where (what else ran on the machine).
func (m machine) describe(w io.Writer, where string) {
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

// ms formats a latency in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
