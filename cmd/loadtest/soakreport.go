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
		loadtest.Thousands(float64(so.rate)), loadtest.Thousands(r.Lookups.Rate), msec(r.Lookups.P50), msec(r.Lookups.P99),
		r.Lookups.Errors, o.tokens, loadtest.Thousands(float64(so.events)), loadtest.Thousands(float64(r.Events.Published)))
	loadtest.WriteSoakSamples(w, r.Samples)
	fmt.Fprintln(w)
	if s, ok := loadtest.Summarize(r.Samples); ok {
		loadtest.WriteSoakSummary(w, s, soakLimit)
	}
}

// mib formats bytes as MiB with one decimal.
func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/loadtest.MiB) }

// msec formats a latency in milliseconds with two decimals.
func msec(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
