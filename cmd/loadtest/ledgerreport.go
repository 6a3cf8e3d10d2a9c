package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// targetMessagesPerAnswer is issue 22's target of broker messages an
// audited answer, at 64 connections.
const targetMessagesPerAnswer = 0.2

// writeLedgerMessages writes, for lookupd in its default configuration
// (the ledger required), the broker messages its ledger sent per answer
// and the records per message, route by route, of the run the closed-loop
// table reports.
func writeLedgerMessages(w io.Writer, connections int, pairs []*pair) {
	first := true
	for _, p := range pairs {
		if p.conf.audit != "" || len(p.lookupd) == 0 {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nBroker messages per audited answer (lookupd in its default configuration, %d connections, the run above; lookup_audit_records_per_message's _count and _sum on lookupd's /metrics read before and after it; the target is at most %.1f at 64 connections):\n\n",
				connections, targetMessagesPerAnswer)
			fmt.Fprintf(w, "| route | transport | answers | ledger messages | records | records an answer | messages an answer | records a message | errors | at most %.1f |\n", targetMessagesPerAnswer)
			fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
			first = false
		}
		r := median(p.lookupd)
		if r.Ledger == nil {
			fmt.Fprintf(w, "| %s | %s | %s | n/a | n/a | n/a | n/a | n/a | %d | n/a |\n", p.route, transport(p.conf.tls), loadtest.Thousands(float64(r.Requests)), r.Errors)
			continue
		}
		l := *r.Ledger
		perAnswer, verdict := per(float64(l.Messages), float64(r.Requests)), "n/a"
		switch {
		case l.Records == 0: // a route disclosing no protected data
			perAnswer, verdict = "n/a", notAudited
		case r.Requests > 0:
			verdict = passFail(float64(l.Messages)/float64(r.Requests) <= targetMessagesPerAnswer)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | **%s** | %s | %d | %s |\n", p.route, transport(p.conf.tls),
			loadtest.Thousands(float64(r.Requests)), loadtest.Thousands(float64(l.Messages)), loadtest.Thousands(float64(l.Records)),
			per(float64(l.Records), float64(r.Requests)), perAnswer, per(float64(l.Records), float64(l.Messages)), r.Errors, verdict)
	}
}

// writeLoneRequest writes, route by route, the latency of a lone request
// to lookupd in its default configuration against LOOKUP_AUDIT=off (same
// route and transport) and the broker's round trip: pass when the
// audited p50 is at most one round trip above the unaudited one.
func writeLoneRequest(w io.Writer, tool loadtest.ClosedLoop, o options, pairs []*pair) {
	off := ledgerOff(pairs)
	first := true
	for _, p := range pairs {
		o2, ok := off[pairKey(p)]
		if p.conf.audit != "" || !ok || len(p.lone) == 0 || len(o2.lone) == 0 {
			continue
		}
		if first {
			fmt.Fprintf(w, "\nA lone request (%s, %v a run after a %v warm-up: one request at a time): lookupd in its default configuration against LOOKUP_AUDIT=off, same route and transport. The broker's round trip is what the ledger waits for: the median of %d JetStream publishes of a %d-byte message, one at a time, to its acknowledgement, on a scratch stream stored in files as the audit stream is, by a client in a process of its own as lookupd is, measured in the default configuration right after its lone runs (a core NATS ping beside it); the ledger's own commit is lookup_audit_commit_seconds (sent to acknowledged) over the lone run, its mean. Pass: the audited p50 at most one such round trip above the unaudited one.\n\n",
				tool.Lone().Name(), o.loneDuration, o.warmup, rttSamples, loadtest.RTTPayload)
			fmt.Fprintln(w, "| route | transport | p50 ledger | p50 off | p50 difference | p99 ledger | p99 off | p99 difference | broker round trip (publish ack) | NATS ping | ledger commit, mean | ledger messages an answer | errors | p50 within a round trip |")
			fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
			first = false
		}
		l, u := median(p.lone), median(o2.lone)
		rtt, ping, verdict := "n/a", "n/a", "n/a"
		if len(p.rtt) > 0 {
			b := medianRTT(p.rtt)
			rtt, ping, verdict = us(b.PublishAck), us(b.Ping), passFail(l.P50-u.P50 <= b.PublishAck)
		}
		commit, msgs := "n/a", "n/a"
		if c := l.Ledger; c != nil {
			msgs = per(float64(c.Messages), float64(l.Requests))
			if c.Commits > 0 {
				commit = us(c.CommitMean())
			}
			if c.Records == 0 {
				verdict = notAudited
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %d | %s |\n", p.route, transport(p.conf.tls),
			us(l.P50), us(u.P50), signedUS(l.P50-u.P50), us(l.P99), us(u.P99), signedUS(l.P99-u.P99), rtt, ping, commit, msgs, l.Errors+u.Errors, verdict)
	}
}

// notAudited is the verdict of a route whose answers left no record: it
// discloses no protected data (GET person), so the ledger is not in its
// way.
const notAudited = "n/a: no record"

// ledgerOff returns the pairs of lookupd with LOOKUP_AUDIT=off, by
// pairKey.
func ledgerOff(pairs []*pair) map[string]*pair {
	off := map[string]*pair{}
	for _, p := range pairs {
		if p.conf.audit == "off" {
			off[pairKey(p)] = p
		}
	}
	return off
}

// pairKey names p's route and transport.
func pairKey(p *pair) string { return p.route + ", " + transport(p.conf.tls) }

// medianRTT returns the measurement of median publish ack (the upper one
// of an even count).
func medianRTT(rs []loadtest.BrokerRTT) loadtest.BrokerRTT {
	s := slices.Clone(rs)
	slices.SortFunc(s, func(a, b loadtest.BrokerRTT) int { return cmp.Compare(a.PublishAck, b.PublishAck) })
	return s[len(s)/2]
}

// per formats a/b with three decimals, n/a when b is 0.
func per(a, b float64) string {
	if b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", a/b)
}

// passFail is a verdict.
func passFail(ok bool) string {
	if ok {
		return "pass"
	}
	return "**fail**"
}

// us formats a latency in whole microseconds.
func us(d time.Duration) string {
	return fmt.Sprintf("%d µs", d.Round(time.Microsecond).Microseconds())
}

// signedUS formats a difference of latencies in whole microseconds with
// its sign.
func signedUS(d time.Duration) string {
	return fmt.Sprintf("%+d µs", d.Round(time.Microsecond).Microseconds())
}
