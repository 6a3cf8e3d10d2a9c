package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// testPairs are the pairs of a run of one round: GET person over HTTP in
// the default configuration and with the ledger off.
func testPairs() []*pair {
	r := func(rate float64, p99 time.Duration) []loadtest.Result {
		return []loadtest.Result{{Rate: rate, P50: p99 / 4, P99: p99, CPUPerRequest: 20 * time.Microsecond}}
	}
	return []*pair{
		{conf: serveConfs[0], route: routeNames[0], bare: r(80000, 4*time.Millisecond), lookupd: r(40000, 6*time.Millisecond),
			openBare:    &loadtest.Result{Rate: 10000, P50: time.Millisecond, P99: 2 * time.Millisecond},
			openLookupd: &loadtest.Result{Rate: 9999, P50: time.Millisecond, P99: 3 * time.Millisecond, Errors: 2}},
		{conf: serveConfs[1], route: routeNames[0], bare: r(80000, 4*time.Millisecond), lookupd: r(50000, 5*time.Millisecond)},
	}
}

func TestWritePairs(t *testing.T) {
	var b strings.Builder
	writePairs(&b, testPairs())
	for _, want := range []string{
		"| GET person | bare net/http, same bytes | HTTP | 80,000 | 1.00 ms | 4.00 ms | 20.0 µs | 0 | 1.00x |",
		"| GET person | **lookupd** | default (ledger required), HTTP | 40,000 | 1.50 ms | 6.00 ms | 20.0 µs | 0 | **0.50x** |",
		"| GET person | **lookupd** | LOOKUP_AUDIT=off, HTTP | 50,000 | 1.25 ms | 5.00 ms | 20.0 µs | 0 | **0.62x** |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteOpenPairs(t *testing.T) {
	var b strings.Builder
	writeOpenPairs(&b, testPairs(), 10000)
	for _, want := range []string{
		"| GET person | bare net/http, same bytes | HTTP | 10,000 | 1.00 ms | 2.00 ms | 0 | 1.00x |",
		"| GET person | **lookupd** | default (ledger required), HTTP | 9,999 | 1.00 ms | 3.00 ms | 2 | **1.50x** |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeOpenPairs(&b, testPairs(), 12000)
	for _, want := range []string{
		"| GET person | bare net/http, same bytes | HTTP | 10,000 *short* |",
		"| GET person | **lookupd** | default (ledger required), HTTP | 9,999 *short* |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "LOOKUP_AUDIT=off") {
		t.Errorf("a pair without an open loop has a row:\n%s", b.String())
	}
}

func TestWriteLedgerCost(t *testing.T) {
	var b strings.Builder
	writeLedgerCost(&b, testPairs())
	if want := "- GET person, HTTP: 0.80x (40,000 vs 50,000 req/s)"; !strings.Contains(b.String(), want) {
		t.Errorf("got %q, want it to hold %q", b.String(), want)
	}
}

// TestWriteYardsticks: a yardstick's row sets lookupd in its default
// configuration, same route and transport, against it.
func TestWriteYardsticks(t *testing.T) {
	res := results{pairs: testPairs(), names: []yardstick{{name: "net/http + PostgreSQL", route: 0}},
		yardsticks: [][]loadtest.Result{{{Rate: 16000, P99: 9 * time.Millisecond}}}}
	var b strings.Builder
	writeYardsticks(&b, res)
	if want := "| GET person, HTTP | net/http + PostgreSQL | 16,000 | 9.00 ms | 0 | 40,000 | **2.50x** |"; !strings.Contains(b.String(), want) {
		t.Errorf("got %q, want it to hold %q", b.String(), want)
	}
	b.Reset()
	writeYardsticks(&b, results{pairs: testPairs()})
	if b.String() != "" {
		t.Errorf("no yardstick: got %q, want nothing", b.String())
	}
}

// TestWriteLedgerCostCPU: the CPU an answer of lookupd and of the NATS
// server beside the ratio, when both were measured.
func TestWriteLedgerCostCPU(t *testing.T) {
	run := func(rate float64, cpu, broker time.Duration) []loadtest.Result {
		return []loadtest.Result{{Rate: rate, Requests: 1000, CPUPerRequest: cpu, BrokerCPUPerRequest: broker}}
	}
	for _, tc := range []struct {
		name             string
		ledger, off      []loadtest.Result
		want, wantAbsent string
	}{
		{name: "CPU measured", ledger: run(30000, 38400*time.Nanosecond, 9100*time.Nanosecond), off: run(40000, 34500*time.Nanosecond, 300*time.Nanosecond),
			want: "0.75x (30,000 vs 40,000 req/s); CPU an answer: lookupd 38.4 µs vs 34.5 µs, the NATS server 9.1 µs vs 0.3 µs"},
		{name: "no broker figure", ledger: run(30000, 38400*time.Nanosecond, 0), off: run(40000, 34500*time.Nanosecond, 0),
			want: "0.75x (30,000 vs 40,000 req/s)\n", wantAbsent: "CPU an answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pairs := []*pair{{conf: serveConfs[0], route: routeNames[1], lookupd: tc.ledger},
				{conf: serveConfs[1], route: routeNames[1], lookupd: tc.off}}
			var b strings.Builder
			writeLedgerCost(&b, pairs)
			if got := b.String(); !strings.Contains(got, tc.want) || tc.wantAbsent != "" && strings.Contains(got, tc.wantAbsent) {
				t.Errorf("got %q, want it to hold %q and not %q", got, tc.want, tc.wantAbsent)
			}
		})
	}
}
