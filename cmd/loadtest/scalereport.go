package main

import (
	"fmt"
	"io"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// writeScaleReport writes the figures of a run as Markdown, ready to paste
// into docs/performance.md.
func writeScaleReport(w io.Writer, o options, tool loadtest.ClosedLoop, mach loadtest.Machine, m *model, res results) {
	fmt.Fprintf(w, "\n### Load test, %s\n\n", mach.When.Format("2006-01-02 15:04 UTC"))
	mach.Describe(w, "load generator and broker on the same machine")
	writeModel(w, o, m)
	rounds := ""
	if o.rounds > 1 {
		rounds = fmt.Sprintf(", median of %d rounds", o.rounds)
	}
	fmt.Fprintf(w, "Closed loop (%s, %v a run after a %v warm-up%s; each lookupd run right after its baseline's, the bare server over the same transport):\n\n",
		tool.Name(), o.duration, o.warmup, rounds)
	writePairs(w, res.pairs)
	fmt.Fprintln(w, "\nServer CPU a request: user and system CPU time of the serving process (lookupd serve, or the bare server, a process of its own) over the requests it completed. Errors: transport errors, timeouts and non-2xx answers (wrk counts statuses of 400 and up; neither server answers 1xx or 3xx).")
	writeLedgerCost(w, res.pairs)
	writeLedgerMessages(w, o.connections, res.pairs)
	writeLoneRequest(w, tool, o, res.pairs)
	writeYardsticks(w, res)
	if o.rate > 0 {
		fmt.Fprintf(w, "\nOpen loop (vegeta at a fixed %s req/s, %v a run, at most %d requests in flight, keep-alive, HTTP/1.1; latency of the successful requests; the target is lookupd's p99 at most 2x the bare server's):\n\n",
			loadtest.Thousands(float64(o.rate)), o.openDuration, o.openWorkers)
		writeOpenPairs(w, res.pairs, o.rate)
		fmt.Fprintln(w, "\nAn achieved rate marked *short* fell more than 5% below the rate asked for: the loadtest.Machine, not only the server, was saturated, and that row's latency is the queue's.")
	}
}

// writeModel writes the paragraphs on the model and the requests.
func writeModel(w io.Writer, o options, m *model) {
	built := fmt.Sprintf("built in this run in %v", m.took.Round(time.Second))
	if m.reused {
		built = fmt.Sprintf("reused, built %s in %v", m.manifest.Built.Format("2006-01-02 15:04 UTC"), m.manifest.BuildTime.Round(time.Second))
	}
	per := "no signers"
	if s := m.pop.Signers(); s > 0 {
		per = fmt.Sprintf("signer j under person j mod %s", loadtest.Thousands(float64(m.pop.People())))
	}
	fmt.Fprintf(w, "Model: %s people and %s signers (%s), seed %d; on disk: broker store %s MiB, lookupd read model %s MiB, the captured answers %s MiB; %s.\n\n",
		loadtest.Thousands(float64(m.pop.People())), loadtest.Thousands(float64(m.pop.Signers())), per, o.model.seed,
		loadtest.MiBs(m.natsBytes), loadtest.MiBs(m.lookupdBytes), loadtest.MiBs(int64(m.bodySize)), built)
	ids := fmt.Sprintf("uniformly random over all %s people", loadtest.Thousands(float64(m.pop.People())))
	if o.model.ids == fixtures.Zipf {
		ids = fmt.Sprintf("Zipf-skewed over all %s people (s=%.1f, hot people spread at random)", loadtest.Thousands(float64(m.pop.People())), loadtest.ZipfS)
	}
	fmt.Fprintf(w, "Requests: ids %s, %s drawn up front and read in turn from a random start; %s tokens in rotation. lookupd serve runs with its defaults but for the configuration named, restarted on the same read model for each; the bare net/http server answers the bytes lookupd answered for the same id, with the same headers (checked on %d ids a configuration), over the same transport (HTTPS: TLS 1.3, keep-alive, HTTP/1.1, the same certificate).\n\n",
		ids, loadtest.Thousands(float64(o.model.draws)), loadtest.Thousands(float64(o.tokens)), sampleChecks)
}

// writePairs writes the closed-loop table: for each route and
// configuration, the bare server's row then lookupd's with its ratio.
func writePairs(w io.Writer, pairs []*pair) {
	fmt.Fprintln(w, "| route | server | configuration | req/s | p50 | p99 | server CPU a request | errors | vs its baseline |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|--:|")
	for _, p := range pairs {
		if len(p.lookupd) == 0 {
			continue
		}
		b, l := median(p.bare), median(p.lookupd)
		fmt.Fprintf(w, "| %s | bare net/http, same bytes | %s | %s | %s | %s | %s | %d | 1.00x |\n",
			p.route, transport(p.conf.tls), loadtest.Thousands(b.Rate), loadtest.Millis(b.P50), loadtest.Millis(b.P99), cpu(b), b.Errors)
		fmt.Fprintf(w, "| %s | **lookupd** | %s | %s | %s | %s | %s | %d | **%s** |\n",
			p.route, p.conf.name, loadtest.Thousands(l.Rate), loadtest.Millis(l.P50), loadtest.Millis(l.P99), cpu(l), l.Errors, ratio(l.Rate, b.Rate))
	}
}

// writeLedgerCost writes what the audit ledger costs: lookupd in its
// default configuration against LOOKUP_AUDIT=off, route by route.
func writeLedgerCost(w io.Writer, pairs []*pair) {
	off := ledgerOff(pairs)
	first := true
	for _, p := range pairs {
		op, ok := off[pairKey(p)]
		if p.conf.audit != "" || !ok || len(p.lookupd) == 0 || len(op.lookupd) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nThe audit ledger (default, required) against LOOKUP_AUDIT=off, lookupd's req/s:")
			first = false
		}
		l, o := median(p.lookupd), median(op.lookupd)
		fmt.Fprintf(w, "- %s, %s: %s (%s vs %s req/s)%s\n", p.route, transport(p.conf.tls), ratio(l.Rate, o.Rate),
			loadtest.Thousands(l.Rate), loadtest.Thousands(o.Rate), cpuAnswer(l, o))
	}
}

// writeYardsticks writes lookupd (default configuration, same route and
// transport) against each yardstick.
func writeYardsticks(w io.Writer, res results) {
	if len(res.names) == 0 {
		return
	}
	fmt.Fprintln(w, "\nAgainst what a user would build instead (the same ids and requests; lookupd in its default configuration):")
	fmt.Fprintln(w, "\n| route | yardstick | its req/s | its p99 | errors | lookupd req/s | lookupd / yardstick |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|")
	for i, y := range res.names {
		if len(res.yardsticks[i]) == 0 {
			continue
		}
		r := median(res.yardsticks[i])
		var l loadtest.Result
		for _, p := range res.pairs {
			if p.conf.audit == "" && p.conf.tls == y.tls && p.route == routeNames[y.route] && len(p.lookupd) > 0 {
				l = median(p.lookupd)
			}
		}
		fmt.Fprintf(w, "| %s, %s | %s | %s | %s | %d | %s | **%s** |\n", routeNames[y.route], transport(y.tls), y.name,
			loadtest.Thousands(r.Rate), loadtest.Millis(r.P99), r.Errors, loadtest.Thousands(l.Rate), ratio(l.Rate, r.Rate))
	}
}

// writeOpenPairs writes the open-loop table; an achieved rate more than
// 5% below rate is marked short.
func writeOpenPairs(w io.Writer, pairs []*pair, rate int) {
	achieved := func(r *loadtest.Result) string {
		if r.Rate < 0.95*float64(rate) {
			return loadtest.Thousands(r.Rate) + " *short*"
		}
		return loadtest.Thousands(r.Rate)
	}
	fmt.Fprintln(w, "| route | server | configuration | achieved req/s | p50 | p99 | errors | p99 vs bare |")
	fmt.Fprintln(w, "|---|---|---|--:|--:|--:|--:|--:|")
	for _, p := range pairs {
		if p.openBare == nil || p.openLookupd == nil {
			continue
		}
		b, l := p.openBare, p.openLookupd
		fmt.Fprintf(w, "| %s | bare net/http, same bytes | %s | %s | %s | %s | %d | 1.00x |\n",
			p.route, transport(p.conf.tls), achieved(b), loadtest.Millis(b.P50), loadtest.Millis(b.P99), b.Errors)
		fmt.Fprintf(w, "| %s | **lookupd** | %s | %s | %s | %s | %d | **%s** |\n",
			p.route, p.conf.name, achieved(l), loadtest.Millis(l.P50), loadtest.Millis(l.P99), l.Errors, ratio(float64(l.P99), float64(b.P99)))
	}
}

// ratio formats a/b as "0.42x", n/a when b is 0.
func ratio(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// cpu formats the CPU time a request of r, n/a when not measured.
func cpu(r loadtest.Result) string {
	if r.CPUPerRequest <= 0 {
		return "n/a"
	}
	return micros(r.CPUPerRequest)
}

// micros formats d in µs with one decimal.
func micros(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3)
}

// cpuAnswer says the CPU an answer of lookupd and of the NATS server in
// run l against run o, "" when not measured.
func cpuAnswer(l, o loadtest.Result) string {
	if l.CPUPerRequest == 0 || o.CPUPerRequest == 0 || l.BrokerCPUPerRequest == 0 && o.BrokerCPUPerRequest == 0 {
		return ""
	}
	return fmt.Sprintf("; CPU an answer: lookupd %s vs %s, the NATS server %s vs %s", micros(l.CPUPerRequest), micros(o.CPUPerRequest),
		micros(l.BrokerCPUPerRequest), micros(o.BrokerCPUPerRequest))
}
