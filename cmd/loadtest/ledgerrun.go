package main

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// What the runs of lookupd measure of its audit ledger (issue 22): the
// broker messages it sent for the answers of a run, the latency of a lone
// request, and the broker's round trip that latency is judged against.

// rttStream is the scratch stream the broker's round trip is measured on,
// made and deleted each time.
const rttStream = "LOADTEST_RTT"

// rttSamples is how many publishes (and pings) the round trip is the
// median of.
const rttSamples = 100

// lone runs lookupd's scenario s with one connection for --lone-duration,
// after the warm-up (with one connection too); admin as for
// closedProfiled, never profiled.
func (ms *measurer) lone(ctx context.Context, s loadtest.Scenario, round int, admin string) (loadtest.Result, error) {
	s.Name += ", one connection"
	return ms.closedWith(ctx, ms.tool.Lone(), s, ms.o.loneDuration, round, admin, nil)
}

// ledgerCounts reads the ledger's counts of the lookupd whose admin
// listener is admin; nil when admin is "" (not lookupd) or they cannot be
// read, which it says on the progress writer (the run goes on).
func (ms *measurer) ledgerCounts(admin, scenario string) *loadtest.LedgerCounts {
	if admin == "" {
		return nil
	}
	c, err := loadtest.ReadLedgerCounts(&http.Client{Timeout: 5 * time.Second}, admin)
	if err != nil {
		fmt.Fprintf(ms.progress, "no ledger counts for %s: %v\n", scenario, err)
		return nil
	}
	return &c
}

// brokerRTT measures the round trip of the model's broker and gives it to
// each of pairs for this round: from a process of its own, as lookupd
// publishes (see rttCommand).
func (ms *measurer) brokerRTT(ctx context.Context, pairs []*pair, round int) error {
	rtt, err := measureRTTApart(ctx, ms.m.broker.URL, rttStream, rttSamples)
	if err != nil {
		return err
	}
	fmt.Fprintf(ms.progress, "round %d: broker round trip: publish ack %v, ping %v (median of %d)\n", round+1, rtt.PublishAck, rtt.Ping, rtt.N)
	for _, p := range pairs {
		p.rtt = append(p.rtt, rtt)
	}
	return nil
}

// ledgerProgress is the end of a run's progress line: the ledger's
// messages an answer, "" when not read.
func ledgerProgress(r loadtest.Result) string {
	if r.Ledger == nil || r.Requests == 0 {
		return ""
	}
	return fmt.Sprintf(", %.3f ledger messages an answer", float64(r.Ledger.Messages)/float64(r.Requests))
}
