package loadtest

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteClosedLoop writes the closed-loop results as a Markdown table,
// each with its ratio to the result of its Baseline (a baseline itself is
// 1.00x; n/a when the baseline was not measured).
func WriteClosedLoop(w io.Writer, results []Result) {
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
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %d |\n", r.Scenario, r.Tool, Thousands(r.Rate), ms(r.P99), ratio, cpu, r.Errors)
	}
}

// WriteOpenLoop writes the open-loop results as a Markdown table.
func WriteOpenLoop(w io.Writer, results []Result) {
	fmt.Fprintln(w, "| server | tool | achieved req/s | p50 | p99 | errors |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|")
	for _, r := range results {
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d |\n", r.Scenario, r.Tool, Thousands(r.Rate), ms(r.P50), ms(r.P99), r.Errors)
	}
}

// Thousands formats a rate rounded to a whole number, with commas.
func Thousands(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// ms formats a latency in milliseconds with two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
