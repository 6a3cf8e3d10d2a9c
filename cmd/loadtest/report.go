package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/lookup/persons/internal/loadtest"
)

// machine describes where and when the figures were measured.
type machine struct {
	When    time.Time
	CPUs    int
	Model   string // CPU model name, "" when unknown
	LoadAvg string // 1-minute load average at the start, "" when unknown
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
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			m.LoadAvg = f[0]
		}
	}
	if out, err := exec.CommandContext(ctx, bin, "version").Output(); err == nil {
		m.Lookupd = string(bytes.TrimSpace(out))
	}
	return m
}

// describe writes the paragraph saying where and when the figures were
// measured, ending with where (what else ran on the machine).
func (m machine) describe(w io.Writer, where string) {
	cpu := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.Model != "" {
		cpu += " (" + m.Model + ")"
	}
	fmt.Fprintf(w, "Machine: %s, %s/%s, load average %s at the start; %s; %s.\n\n",
		cpu, runtime.GOOS, runtime.GOARCH, orUnknown(m.LoadAvg), orUnknown(m.Lookupd), where)
}

// writeReport writes the figures as Markdown, ready to paste into the
// README.
func writeReport(w io.Writer, o options, tool loadtest.ClosedLoop, m machine, closed, open []loadtest.Result) {
	fmt.Fprintf(w, "\n### Load test, %s\n\n", m.When.Format("2006-01-02 15:04 UTC"))
	m.describe(w, "load generator on the same machine")
	rounds := ""
	if o.rounds > 1 {
		rounds = fmt.Sprintf(", median of %d rounds", o.rounds)
	}
	fmt.Fprintf(w, "Closed loop (%s, %v a scenario after a %v warm-up%s; ratios to the bare server answering the same bytes, in this run):\n\n",
		tool.Name(), o.duration, o.warmup, rounds)
	writeClosedLoop(w, closed)
	fmt.Fprintln(w, "\nServer CPU a request: the user and system CPU time of the serving process (lookupd dev with its in-process NATS, or the bare server) over the requests it completed; n/a when the load generator shares its process.")
	writeAuditRatio(w, closed)
	if len(open) > 0 {
		fmt.Fprintf(w, "\nOpen loop (vegeta at a fixed %s req/s, %v a scenario, at most %d requests in flight; latency of the successful requests):\n\n",
			loadtest.Thousands(float64(o.rate)), o.openDuration, o.openWorkers)
		writeOpenLoop(w, open)
	}
}

// writeAuditRatio writes what the audit ledger costs: the audited GET
// signers against the same GET with auditing off, in this run.
func writeAuditRatio(w io.Writer, closed []loadtest.Result) {
	var off, on *loadtest.Result
	for i := range closed {
		switch r := &closed[i]; {
		case r.Scenario == AuditedScenario:
			on = r
		case strings.HasPrefix(r.Scenario, "lookupd GET signers"):
			off = r
		}
	}
	if off == nil || on == nil || off.Rate == 0 {
		return
	}
	fmt.Fprintf(w, "\nAudit ledger: GET signers with expand with `LOOKUP_AUDIT=required` at %.2fx of the same GET with auditing off (%s vs %s req/s).\n",
		on.Rate/off.Rate, loadtest.Thousands(on.Rate), loadtest.Thousands(off.Rate))
}

// writeClosedLoop writes the closed-loop results as a Markdown table,
// each with its ratio to the result of its Baseline (a baseline itself is
// 1.00x; n/a when the baseline was not measured).
func writeClosedLoop(w io.Writer, results []loadtest.Result) {
	rates := make(map[string]float64, len(results))
	for _, r := range results {
		rates[r.Scenario] = r.Rate
	}
	fmt.Fprintln(w, "| server | tool | req/s | p99 | vs bare | server CPU a request | errors |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|")
	for _, r := range results {
		base := r.Baseline
		if base == "" {
			base = r.Scenario
		}
		ratio := "n/a"
		if rates[base] > 0 {
			ratio = fmt.Sprintf("%.2fx", r.Rate/rates[base])
		}
		cpu := "n/a"
		if r.CPUPerRequest > 0 {
			cpu = fmt.Sprintf("%.1f µs", float64(r.CPUPerRequest.Nanoseconds())/1e3)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d |\n", r.Scenario, r.Tool, loadtest.Thousands(r.Rate), ms(r.P99), ratio, cpu, r.Errors)
	}
}

// writeOpenLoop writes the open-loop results as a Markdown table.
func writeOpenLoop(w io.Writer, results []loadtest.Result) {
	fmt.Fprintln(w, "| server | tool | achieved req/s | p50 | p99 | errors |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|")
	for _, r := range results {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d |\n", r.Scenario, r.Tool, loadtest.Thousands(r.Rate), ms(r.P50), ms(r.P99), r.Errors)
	}
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
