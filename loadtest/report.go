package loadtest

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteClosedLoop writes the closed-loop results as a Markdown table,
// each with its ratio to the result of the scenario named base.
func WriteClosedLoop(w io.Writer, results []Result, base string) {
	var baseRate float64
	for _, r := range results {
		if r.Scenario == base {
			baseRate = r.Rate
		}
	}
	fmt.Fprintln(w, "| server | tool | req/s | p99 | vs bare | errors |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|")
	for _, r := range results {
		ratio := "n/a"
		if baseRate > 0 {
			ratio = fmt.Sprintf("%.2fx", r.Rate/baseRate)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d |\n", r.Scenario, r.Tool, Thousands(r.Rate), ms(r.P99), ratio, r.Errors)
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
