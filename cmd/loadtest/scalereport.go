package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
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
	writeGoals(w, res.pairs)
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
	fmt.Fprintf(w, "Model: %s people and %s signers (%s), seed %d; on disk: broker store %s MiB, lookupd read model %s MiB, the captured answers %s MiB; %s.\n\n",
		loadtest.Thousands(float64(m.pop.People())), loadtest.Thousands(float64(m.pop.Signers())), shapeText(m.pop), o.model.seed,
		loadtest.MiBs(m.natsBytes), loadtest.MiBs(m.lookupdBytes), loadtest.MiBs(int64(m.bodySize)), built)
	ids := "uniformly random"
	if o.model.ids == fixtures.Zipf {
		ids = fmt.Sprintf("Zipf-skewed (s=%.1f, hot people spread at random)", loadtest.ZipfS)
	}
	fmt.Fprintf(w, "Requests: ids %s over the people a route reads (%s), %s drawn up front a route and read in turn from a random start; %s tokens in rotation. lookupd serve runs with its defaults but for the configuration named, restarted on the same read model for each; the bare net/http server answers the bytes lookupd answered for the same id, with the same headers (checked on %d ids a configuration), over the same transport (HTTPS: TLS 1.3, keep-alive, HTTP/1.1, the same certificate).\n\n",
		ids, routesText(m.pop), loadtest.Thousands(float64(o.model.draws)), loadtest.Thousands(float64(o.tokens)), sampleChecks)
}

// shapeText says how many people of p have how many signers, the most
// signers first: "20,000 people with 5 signers each, 900,000 with 1,
// 80,000 with none".
func shapeText(p *fixtures.Population) string {
	counts := map[int]int{}
	for i := range p.People() {
		counts[p.SignerCount(i)]++
	}
	ns := slices.Sorted(maps.Keys(counts))
	slices.Reverse(ns)
	parts := make([]string, len(ns))
	for k, n := range ns {
		of := strconv.Itoa(n)
		if n == 0 {
			of = "none"
		}
		parts[k] = loadtest.Thousands(float64(counts[n])) + " with " + of
	}
	parts[0] = strings.Replace(parts[0], " with ", " people with ", 1)
	if ns[0] > 0 {
		parts[0] += " signers each"
	}
	return strings.Join(parts, ", ")
}

// routesText says which people each route reads.
func routesText(p *fixtures.Population) string {
	return fmt.Sprintf("%s: all %s people; %s: the %s with one signer; %s: the %s with %d",
		routePerson, loadtest.Thousands(float64(p.People())), routeSigners, loadtest.Thousands(float64(len(p.ConsumersWith(1)))),
		routeFive, loadtest.Thousands(float64(len(p.ConsumersWith(fixtures.FiveSigners)))), fixtures.FiveSigners)
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

// writeLedgerCost writes what the audit ledger costs, route by route
// and transport by transport: lookupd in its default configuration
// against LOOKUP_AUDIT=off, and each against the bare server's run before
// it; GET signers with expand discloses one person an answer, at five
// signers five.
func writeLedgerCost(w io.Writer, pairs []*pair) {
	off := ledgerOff(pairs)
	first := true
	for _, p := range pairs {
		op, ok := off[pairKey(p)]
		if p.conf.audit != "" || !ok || len(p.lookupd) == 0 || len(op.lookupd) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nThe audit ledger (default, required) against LOOKUP_AUDIT=off, lookupd's req/s, each beside the bare server's run before it (GET person discloses no protected data; GET signers with expand one person an answer, at five signers five):")
			fmt.Fprintln(w, "\n| route | transport | default req/s | off req/s | default / off | default vs bare | off vs bare | lookupd CPU an answer, default vs off | NATS server CPU an answer, default vs off | errors |")
			fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
			first = false
		}
		l, o := median(p.lookupd), median(op.lookupd)
		fmt.Fprintf(w, "| %s | %s | %s | %s | **%s** | %s | %s | %s | %s | %d |\n", p.route, transport(p.conf.tls),
			loadtest.Thousands(l.Rate), loadtest.Thousands(o.Rate), ratio(l.Rate, o.Rate), vsBare(p), vsBare(op),
			cpuPair(l.CPUPerRequest, o.CPUPerRequest), cpuPair(l.BrokerCPUPerRequest, o.BrokerCPUPerRequest), l.Errors+o.Errors)
	}
}

// vsBare formats p's lookupd req/s against its bare server's (medians),
// n/a without a bare run.
func vsBare(p *pair) string {
	if len(p.bare) == 0 || len(p.lookupd) == 0 {
		return "n/a"
	}
	return ratio(median(p.lookupd).Rate, median(p.bare).Rate)
}

// goal is a throughput goal of the issues: lookupd in its default
// configuration on route at least min times the bare server (against
// bare) or lookupd with the ledger off (not against bare), over each
// transport.
type goal struct {
	route        string
	againstBare  bool
	min          float64
	issue, about string
}

// goals are the throughput goals the report judges.
var goals = []goal{
	{route: routePerson, againstBare: true, min: 0.75, issue: "23", about: "random ids"},
	{route: routeSigners, againstBare: true, min: 0.65, issue: "23", about: "one person an answer"},
	{route: routeFive, againstBare: true, min: 0.5, issue: "45", about: "five persons an answer"},
	{route: routeSigners, min: 0.8, issue: "22, 45", about: "the ledger's cost at one person an answer"},
	{route: routeFive, min: 0.8, issue: "45", about: "the ledger's cost at five persons an answer"},
}

// writeGoals judges each goal on the medians of the run, transport by
// transport: pass when lookupd in its default configuration reaches the
// goal's ratio (the errors of the two runs beside it).
func writeGoals(w io.Writer, pairs []*pair) {
	off := ledgerOff(pairs)
	first := true
	for _, g := range goals {
		for _, p := range pairs {
			if p.conf.audit != "" || p.route != g.route || len(p.lookupd) == 0 {
				continue
			}
			against, base := "the bare server", p.bare
			if !g.againstBare {
				against, base = "LOOKUP_AUDIT=off", nil
				if op, ok := off[pairKey(p)]; ok {
					base = op.lookupd
				}
			}
			if len(base) == 0 {
				continue
			}
			if first {
				fmt.Fprintln(w, "\nAgainst the throughput goals (lookupd in its default configuration, the ledger required; medians of the closed loop above):")
				fmt.Fprintln(w, "\n| route | transport | against | what | issue | lookupd / it | at least | errors | verdict |")
				fmt.Fprintln(w, "|---|---|---|---|---|--:|--:|--:|--:|")
				first = false
			}
			l, b := median(p.lookupd), median(base)
			r := l.Rate / b.Rate
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | **%.2fx** | %.2fx | %d | %s |\n", g.route, transport(p.conf.tls), against, g.about, g.issue,
				r, g.min, l.Errors+b.Errors, passFail(r >= g.min))
		}
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

// cpuPair formats the CPU an answer of two runs, "a vs b", n/a when
// neither was measured.
func cpuPair(a, b time.Duration) string {
	if a <= 0 && b <= 0 {
		return "n/a"
	}
	return micros(a) + " vs " + micros(b)
}
