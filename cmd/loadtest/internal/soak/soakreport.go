package soak

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// writeSoakReport writes what a soak measured as Markdown: the loadtest.Machine,
// the set-up, each run's memory samples, the runs side by side and the
// criteria judged on them.
func writeSoakReport(w io.Writer, o Options, m loadtest.Machine, l soakLoaded, phases []soakPhaseRun) {
	so := o
	fmt.Fprintf(w, "\n### Memory soak, %s\n\n", m.When.Format("2006-01-02 15:04 UTC"))
	m.Describe(w, "load generator and NATS on the same loadtest.Machine, in another process")
	settings := "its default settings"
	if len(so.serveFlags) > 0 {
		settings = "its default settings but `" + strings.Join(so.serveFlags, " ") + "`"
	}
	fmt.Fprintf(w, "The read model: %s people and %s signers (%s events, published in %v; "+
		"`lookupd serve` built it in %v, peak RSS (VmHWM) %s MiB). Then `lookupd serve` with %s, twice on that read model, "+
		"each time with its pages dropped from the page cache first and in a memory cgroup of its own from its start: "+
		"without a limit, then within %s MiB. Each time, for %v: lookups at %s req/s (GET person and GET signers with expand in turn, "+
		"uniformly random consumers, %d tokens) and %s events/s (updates of random people and signers). "+
		"The cgroup's accounting is read every %v, `/proc` and `/metrics` every %v (MiB).\n\n",
		loadtest.Thousands(float64(so.people)), loadtest.Thousands(float64(so.signers)),
		loadtest.Thousands(float64(l.Events)), l.Published.Round(time.Second), l.CaughtUp.Round(time.Second), loadtest.MiBs(l.AtReady.HWM),
		settings, loadtest.MiBs(so.limit), so.duration, loadtest.Thousands(float64(so.rate)), o.tokens,
		loadtest.Thousands(float64(so.events)), cgroupInterval, so.interval)
	for _, p := range phases {
		fmt.Fprintf(w, "#### %s\n\n", p.name())
		if p.Died != "" {
			fmt.Fprintf(w, "**lookupd serve died: %s.**\n\n", p.Died)
		}
		writeSoakSamples(w, p.Run.Samples)
		fmt.Fprintln(w)
	}
	if len(phases) == 2 {
		writeSoakPhases(w, phases, so.rate)
		writeSoakChecks(w, SoakChecks(phases[0].phase(), phases[1].phase()))
	}
}

// writeSoakSamples writes samples as a Markdown table: time, RSS, its
// anonymous and file-backed parts, the file part's Badger tables and
// memtables (write-ahead logs, with the value log), the Go heap in use,
// the size of the table files on disk and the applied sequence. Memory is
// in MiB.
func writeSoakSamples(w io.Writer, samples []MemSample) {
	fmt.Fprintln(w, "| time | RSS | anon | file | of which tables (.sst) | memtables + vlog | Go heap in use | tables on disk | applied seq |")
	fmt.Fprintln(w, "|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
	for _, s := range samples {
		fmt.Fprintf(w, "| %v | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.At, loadtest.MiBs(s.RSS), loadtest.MiBs(s.Anon), loadtest.MiBs(s.File),
			loadtest.MiBs(s.Tables), loadtest.MiBs(s.Memtables+s.ValueLog), loadtest.MiBs(s.Heap), loadtest.MiBs(s.TablesOnDisk), loadtest.Thousands(float64(s.Applied)))
	}
}

// writeSoakPhases writes the runs of a soak side by side: what a
// container operator watches. An achieved rate more than 5% below rate is
// marked short.
func writeSoakPhases(w io.Writer, phases []soakPhaseRun, rate int) {
	row := func(name string, f func(p soakPhaseRun) string) {
		fmt.Fprintf(w, "| %s |", name)
		for _, p := range phases {
			fmt.Fprintf(w, " %s |", f(p))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprint(w, "| |")
	for _, p := range phases {
		fmt.Fprintf(w, " %s |", p.name())
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("--:|", len(phases)))
	row("lookupd's memory budget", func(p soakPhaseRun) string { return p.Budget })
	row("caught up with the stream once listening", func(p soakPhaseRun) string { return p.Ready.Round(time.Second).String() })
	row("OOM kills", func(p soakPhaseRun) string { return fmt.Sprint(p.End.OOMKills) })
	row("anonymous memory, peak (MiB)", func(p soakPhaseRun) string { return loadtest.MiBs(p.Cgroup.PeakAnon) })
	row("charged to the cgroup, peak (anonymous + page cache, MiB)", func(p soakPhaseRun) string { return loadtest.MiBs(p.Cgroup.PeakUsage) })
	row("page cache refaults under the load", func(p soakPhaseRun) string { return loadtest.Thousands(float64(p.Cgroup.Refaults())) })
	row("charges that met the limit", func(p soakPhaseRun) string { return loadtest.Thousands(float64(p.End.LimitHits)) })
	row("lookups: achieved req/s", func(p soakPhaseRun) string {
		if r := p.Run.Lookups.Rate; r < 0.95*float64(rate) {
			return loadtest.Thousands(r) + " *short*"
		}
		return loadtest.Thousands(p.Run.Lookups.Rate)
	})
	row("lookups: p50 / p99", func(p soakPhaseRun) string {
		return loadtest.Millis(p.Run.Lookups.P50) + " / " + loadtest.Millis(p.Run.Lookups.P99)
	})
	row("lookups: errors", func(p soakPhaseRun) string { return p.Run.Lookups.ErrorsText() })
	row("events published", func(p soakPhaseRun) string { return loadtest.Thousands(float64(p.Run.Events.Published)) })
	row("events applied a second (published a second)", func(p soakPhaseRun) string { return appliedRate(p.Run) })
	row("CPU under the load, of one core: lookupd / the NATS server / the load tool", func(p soakPhaseRun) string {
		c := p.Run.CPU
		return c.share(c.Lookupd) + " / " + c.share(c.Broker) + " / " + c.share(c.Tool)
	})
	fmt.Fprintln(w)
}

// appliedRate is the rate at which lookupd applied the stream over the
// memory samples of run, beside the rate events were published at; it is
// marked *behind* when lookupd applied less than 95% of what was
// published meanwhile (its read model growing staler as the load went on).
func appliedRate(run soakRun) string {
	if len(run.Samples) < 2 {
		return "n/a"
	}
	first, last := run.Samples[0], run.Samples[len(run.Samples)-1]
	secs := (last.At - first.At).Seconds()
	if secs <= 0 || last.Applied < first.Applied {
		return "n/a"
	}
	applied := float64(last.Applied-first.Applied) / secs
	got := loadtest.Thousands(applied) + " (" + loadtest.Thousands(run.Events.Rate()) + ")"
	if applied < 0.95*run.Events.Rate() {
		got += " *behind*"
	}
	return got
}

// writeSoakChecks writes the criteria of a soak, each passed or not, and
// the verdict.
func writeSoakChecks(w io.Writer, checks []SoakCheck) {
	fmt.Fprintln(w, "| criterion (within the limit) | target | got | |")
	fmt.Fprintln(w, "|---|---|--:|---|")
	all := true
	for _, c := range checks {
		verdict := "pass"
		if !c.Pass {
			verdict, all = "**FAIL**", false
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", c.Criterion, c.Target, c.Got, verdict)
	}
	if all {
		fmt.Fprintln(w, "\nEvery criterion passed.")
	} else {
		fmt.Fprintln(w, "\n**Some criteria failed.**")
	}
}
