package loadtest

import (
	"fmt"
	"io"
)

// MiB is a mebibyte: memory figures of a soak are in MiB.
const MiB = 1 << 20

// SoakSummary is what the memory samples of a soak come to.
type SoakSummary struct {
	First, Peak, End MemSample // Peak: the sample of highest RSS (the first of equals)
}

// Growth is the RSS at the end less the RSS at the start.
func (s SoakSummary) Growth() int64 { return s.End.RSS - s.First.RSS }

// Summarize returns the summary of samples, in time order; ok is false
// when there are none.
func Summarize(samples []MemSample) (s SoakSummary, ok bool) {
	if len(samples) == 0 {
		return s, false
	}
	s.First, s.Peak, s.End = samples[0], samples[0], samples[len(samples)-1]
	for _, m := range samples[1:] {
		if m.RSS > s.Peak.RSS {
			s.Peak = m
		}
	}
	return s, true
}

// WriteSoakSamples writes samples as a Markdown table: time, RSS, its
// anonymous and file-backed parts, the file part's Badger tables and
// memtables (write-ahead logs, with the value log), the Go heap in use,
// the size of the table files on disk and the applied sequence. Memory is
// in MiB.
func WriteSoakSamples(w io.Writer, samples []MemSample) {
	fmt.Fprintln(w, "| time | RSS | anon | file | of which tables (.sst) | memtables + vlog | Go heap in use | tables on disk | applied seq |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range samples {
		fmt.Fprintf(w, "| %v | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.At, mib(s.RSS), mib(s.Anon), mib(s.File),
			mib(s.Tables), mib(s.Memtables+s.ValueLog), mib(s.Heap), mib(s.TablesOnDisk), Thousands(float64(s.Applied)))
	}
}

// WriteSoakSummary writes the summary line of a soak: peak RSS (when,
// and its parts), RSS at the end, the growth over the soak, and whether
// the peak stayed under limit bytes.
func WriteSoakSummary(w io.Writer, s SoakSummary, limit int64) {
	verdict := "no"
	if s.Peak.RSS < limit {
		verdict = "yes"
	}
	pct := 0.0
	if s.First.RSS > 0 {
		pct = 100 * float64(s.Growth()) / float64(s.First.RSS)
	}
	fmt.Fprintf(w, "Peak RSS %s MiB at %v (anon %s, file %s of which tables %s; Go heap %s); "+
		"RSS at the end %s MiB; growth over the soak %+.1f MiB (%+.1f%%, from %s MiB at %v); "+
		"peak < %s MiB: %s.\n",
		mib(s.Peak.RSS), s.Peak.At, mib(s.Peak.Anon), mib(s.Peak.File), mib(s.Peak.Tables), mib(s.Peak.Heap),
		mib(s.End.RSS), float64(s.Growth())/MiB, pct, mib(s.First.RSS), s.First.At, mib(limit), verdict)
}

// mib formats bytes as MiB with one decimal ("n/a" when negative:
// unknown).
func mib(b int64) string {
	if b < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(b)/MiB)
}
