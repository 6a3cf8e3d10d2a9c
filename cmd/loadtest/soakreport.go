package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lookup/persons/internal/loadtest"
)

// writeSoakReport writes what a soak measured as Markdown: the machine,
// the set-up, the memory samples and their summary.
func writeSoakReport(w io.Writer, o options, m machine, l soakLoaded, r soakRun) {
	so := o.soak
	fmt.Fprintf(w, "\n### Memory soak, %s\n\n", m.When.Format("2006-01-02 15:04 UTC"))
	m.describe(w, "load generator and NATS on the same machine, in another process")
	settings := "its default settings"
	if len(so.serveFlags) > 0 {
		settings = "its default settings but `" + strings.Join(so.serveFlags, " ") + "`"
	}
	fmt.Fprintf(w, "`lookupd serve` with %s, holding %s people and %s signers (%s events, published in %v; "+
		"serve caught up with them in %v, peak RSS (VmHWM) %s MiB by then), then for %v: "+
		"lookups at %s req/s (achieved %s, p50 %s, p99 %s, %d errors; GET person and GET signers with expand in turn, random consumers, %d tokens) "+
		"and %s events/s (%s published, updates of random people and signers).\n\n",
		settings, loadtest.Thousands(float64(so.people)), loadtest.Thousands(float64(so.signers)),
		loadtest.Thousands(float64(l.Events)), l.Published.Round(time.Second), l.CaughtUp.Round(time.Second), mib(l.AtReady.HWM), so.duration,
		loadtest.Thousands(float64(so.rate)), loadtest.Thousands(r.Lookups.Rate), ms(r.Lookups.P50), ms(r.Lookups.P99),
		r.Lookups.Errors, o.tokens, loadtest.Thousands(float64(so.events)), loadtest.Thousands(float64(r.Events.Published)))
	writeSoakSamples(w, r.Samples)
	fmt.Fprintln(w)
	if s, ok := loadtest.Summarize(r.Samples); ok {
		writeSoakSummary(w, s, soakLimit)
	}
}

// writeSoakSamples writes samples as a Markdown table: time, RSS, its
// anonymous and file-backed parts, the file part's Badger tables and
// memtables (write-ahead logs, with the value log), the Go heap in use,
// the size of the table files on disk and the applied sequence. Memory is
// in MiB.
func writeSoakSamples(w io.Writer, samples []loadtest.MemSample) {
	fmt.Fprintln(w, "| time | RSS | anon | file | of which tables (.sst) | memtables + vlog | Go heap in use | tables on disk | applied seq |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range samples {
		fmt.Fprintf(w, "| %v | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.At, mib(s.RSS), mib(s.Anon), mib(s.File),
			mib(s.Tables), mib(s.Memtables+s.ValueLog), mib(s.Heap), mib(s.TablesOnDisk), loadtest.Thousands(float64(s.Applied)))
	}
}

// writeSoakSummary writes the summary line of a soak: peak RSS (when,
// and its parts), RSS at the end, the growth over the soak, and whether
// the peak stayed under limit bytes.
func writeSoakSummary(w io.Writer, s loadtest.SoakSummary, limit int64) {
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
		mib(s.End.RSS), float64(s.Growth())/loadtest.MiB, pct, mib(s.First.RSS), s.First.At, mib(limit), verdict)
}

// mib formats bytes as MiB with one decimal ("n/a" when negative:
// unknown).
func mib(b int64) string {
	if b < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(b)/loadtest.MiB)
}
