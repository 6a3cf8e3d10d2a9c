package accountingload

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// searchTarget is issue 22's bound on a search's p99.
const searchTarget = 100 * time.Millisecond

// writeAccountingReport writes what an accounting measurement found as
// Markdown: the machine and ledger, the index build, the comparisons
// with a full scan, and the searches against the target.
func writeAccountingReport(w io.Writer, o Options, m loadtest.Machine, r accountingResult) {
	ao, man := o, r.ledger.man
	fmt.Fprintf(w, "\n### The accounting service at %s records, %s\n\n", loadtest.Thousands(float64(man.Records)), m.When.Format("2006-01-02 15:04 UTC"))
	m.Describe(w, "NATS and the searching client in this tool's process, `lookupd audit serve` in its own")
	filled := fmt.Sprintf("filled by this run in %v (`lookupd audit verify`, %v: %s)", man.FillTime.Round(time.Second),
		r.ledger.verifyTook.Round(time.Second), r.ledger.verified)
	if r.ledger.reused {
		filled = fmt.Sprintf("reused, filled on %s in %v", man.Built.Format("2006-01-02"), man.FillTime.Round(time.Second))
	}
	counts := r.scan.PersonRecords()
	slices.Sort(counts)
	fmt.Fprintf(w, "The ledger: %s records of %s persons in %s format 2 messages on %d chains (1 to %d records a message), "+
		"%s; the stream holds %s messages, %s records (with the searches of earlier runs), %s MiB on disk. "+
		"Records of a person: median %d, p99 %d, most %d.\n\n",
		loadtest.Thousands(float64(man.Records)), loadtest.Thousands(float64(len(counts))), loadtest.Thousands(float64(man.Messages)),
		man.Replicas, man.MaxRecords, filled, loadtest.Thousands(float64(r.stream)), loadtest.Thousands(float64(r.scan.Records)),
		loadtest.MiBs(r.natsBytes), at(counts, 50), at(counts, 99), at(counts, 100))
	settings := "its default settings"
	if len(ao.serveFlags) > 0 {
		settings = "its default settings but `" + strings.Join(ao.serveFlags, " ") + "`"
	}
	writeBuild(w, r, settings)
	writeChecks(w, r)
	writeSearches(w, r.searches, ao)
}

// at returns the p-th percentile of sorted counts (0 for none).
func at(sorted []int, p int) int {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)*p/100, len(sorted)-1)]
}

// writeBuild writes the index build: its segments around the kill, its
// rate, size and memory.
func writeBuild(w io.Writer, r accountingResult, settings string) {
	b := r.build
	if b.Kept {
		fmt.Fprintf(w, "The index: `lookupd audit serve` with %s, on an index kept from an earlier run (at applied sequence %s), to caught up with the stream; "+
			"**not a build from empty**: its time and rate below are the catching up's alone", settings, loadtest.Thousands(float64(b.ResumedAt)))
	} else {
		fmt.Fprintf(w, "The index: `lookupd audit serve` with %s, from an empty index to caught up with the stream", settings)
	}
	if b.KilledAt > 0 {
		fmt.Fprintf(w, ", killed with SIGKILL at applied sequence %s and restarted on its index: it resumed from its checkpoint at %s, not from 0",
			loadtest.Thousands(float64(b.KilledAt)), loadtest.Thousands(float64(b.ResumedAt)))
	}
	fmt.Fprint(w, ".\n\n| run | messages applied | time | messages/s | records/s | CPU | CPU per 1,000 records | GCs per 1M records |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	recs := float64(r.scan.Records) / float64(max(r.stream, 1)) // records a message
	row := func(name string, msgs uint64, took, cpu time.Duration, gcs int) {
		n := float64(msgs) * recs
		fmt.Fprintf(w, "| %s | %s | %v | %s | %s | %v | %s | %s |\n", name, loadtest.Thousands(float64(msgs)), took.Round(time.Second),
			loadtest.Thousands(float64(msgs)/took.Seconds()), loadtest.Thousands(n/took.Seconds()), cpu.Round(time.Second),
			loadtest.Millis(time.Duration(float64(cpu)/max(n, 1)*1000)), loadtest.Thousands(float64(gcs)/max(n, 1)*1e6))
	}
	for i, s := range b.Segments {
		name := "to caught up"
		if len(b.Segments) > 1 && i == 0 {
			name = "until the SIGKILL"
		}
		row(name, s.To-s.From, s.Took, s.CPU, s.GCs)
	}
	if len(b.Segments) > 1 {
		row("in all", r.stream, b.Took(), b.CPU(), b.GCs())
	}
	fmt.Fprintf(w, "\nOnce caught up, audit serve went on compacting its index for %v (%v of CPU) before it was idle; the searches below were measured after that.\n",
		b.Settled.Round(time.Second), b.SettleCPU.Round(time.Second))
	fmt.Fprintf(w, "\nA full scan of the stream by this tool (reading and decoding every record, as `lookupd audit --person` without the service does) took %v: "+
		"the build took %.1fx that. The index on disk: %s MiB (%.0f bytes a record). Memory of audit serve (MiB): "+
		"while building, peak RSS (VmHWM) %s, of which at most %s anonymous and %s file-backed; while searching, %s, %s and %s.\n\n",
		r.scanTook.Round(time.Second), b.Took().Seconds()/r.scanTook.Seconds(), loadtest.MiBs(b.IndexBytes),
		float64(b.IndexBytes)/float64(max(r.scan.Records, 1)), loadtest.MiBs(r.memBuild.HWM), loadtest.MiBs(r.memBuild.Anon), loadtest.MiBs(r.memBuild.File),
		loadtest.MiBs(r.memSearch.HWM), loadtest.MiBs(r.memSearch.Anon), loadtest.MiBs(r.memSearch.File))
}

// writeChecks writes the comparisons of the index with the scan.
func writeChecks(w io.Writer, r accountingResult) {
	verdict := func(diff []string) string {
		if len(diff) == 0 {
			return "**equal**"
		}
		return "**differ**: " + strings.Join(diff, "; ")
	}
	fmt.Fprintf(w, "The index against a full scan of the stream up to sequence %s: every record of the index "+
		"(%s records of %s persons, read from its files once the service stopped, in %v) and the scan's: %s. "+
		"%d persons' whole histories read through the API (JSON lines, 500 a page; %s records): %s.\n\n",
		loadtest.Thousands(float64(r.stream)), loadtest.Thousands(float64(r.full.Records)), loadtest.Thousands(float64(r.full.Persons)),
		r.full.Took.Round(time.Second), verdict(r.full.Diff), r.sample.Persons, loadtest.Thousands(float64(r.sample.Records)), verdict(r.sample.Diff))
}

// writeSearches writes each kind of search: its requests' latencies
// against the target and the baseline, and for whole histories the
// searches'.
func writeSearches(w io.Writer, runs []searchRun, ao Options) {
	fmt.Fprintf(w, "Searches, each kind for %v from %d connections at once (closed loop; each search is recorded in the ledger before it is answered). "+
		"Persons drawn as often as the ledger discloses them, but \"any person\" (uniformly) and the baseline (persons without records); "+
		"the officer's searches by recipient over a month (HTML, the service's page size) of a client drawn uniformly of the ledger's %d, busy or quiet. "+
		"The officer's page and letter of persons of about 1,000 records (HTML; the letter a POST of its form, every accountable disclosure of six years). "+
		"Latency of each request (a page); the target is p99 <= %v, but for the officer's pages (issue 37's, as the table says).\n\n",
		ao.duration, ao.connections, fixtures.LedgerClients, searchTarget)
	fmt.Fprintln(w, "| search | requests | req/s | records a search | p50 | p99 | max | p99 vs baseline | p99 within its target | audit serve CPU a request | GCs per 1,000 requests |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|")
	base := percentile(runs[0].Requests, 99)
	for _, r := range runs {
		p99 := percentile(r.Requests, 99)
		ok := "yes (<= " + loadtest.Millis(r.Kind.p99Target()) + ")"
		if p99 > r.Kind.p99Target() {
			ok = "**no** (<= " + loadtest.Millis(r.Kind.p99Target()) + ")"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %.1f | %s | %s | %s | %.2fx | %s | %s | %.1f |\n", r.Kind.name,
			loadtest.Thousands(float64(len(r.Requests))), loadtest.Thousands(float64(len(r.Requests))/r.Took.Seconds()),
			mean(r.Records), loadtest.Millis(percentile(r.Requests, 50)), loadtest.Millis(p99), loadtest.Millis(percentile(r.Requests, 100)),
			float64(p99)/float64(max(base, 1)), ok, loadtest.Millis(time.Duration(float64(r.CPU)/float64(max(len(r.Requests), 1)))),
			float64(r.GCs)/float64(max(len(r.Requests), 1))*1000)
	}
	fmt.Fprintln(w, "\nWhole histories, every page of a search:")
	fmt.Fprintln(w, "\n| search | searches | pages a search | records a search (most) | p50 | p99 | max |\n|---|--:|--:|--:|--:|--:|--:|")
	for _, r := range runs {
		if !r.Kind.whole {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %.2f | %.1f (%d) | %s | %s | %s |\n", r.Kind.name, loadtest.Thousands(float64(len(r.Histories))),
			float64(len(r.Requests))/float64(max(len(r.Histories), 1)), mean(r.Records), slices.Max(append([]int{0}, r.Records...)),
			loadtest.Millis(percentile(r.Histories, 50)), loadtest.Millis(percentile(r.Histories, 99)), loadtest.Millis(percentile(r.Histories, 100)))
	}
	fmt.Fprintln(w)
}

// mean returns the mean of ns (0 for none).
func mean(ns []int) float64 {
	if len(ns) == 0 {
		return 0
	}
	var s int
	for _, n := range ns {
		s += n
	}
	return float64(s) / float64(len(ns))
}
