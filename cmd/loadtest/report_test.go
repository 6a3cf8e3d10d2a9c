package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
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

// fivePairs are the pairs of a run of one round over HTTP with every
// route, lookupd's req/s in the default configuration and with the ledger
// off, the bare server at 60,000 for each: GET person 45,000 and 48,000,
// GET signers with expand 33,000 and 40,000, at five signers 27,000 and
// 36,000.
func fivePairs() []*pair {
	r := func(rate float64, cpu, broker time.Duration) []loadtest.Result {
		return []loadtest.Result{{Rate: rate, Requests: 1000, CPUPerRequest: cpu, BrokerCPUPerRequest: broker}}
	}
	bare := func() []loadtest.Result { return r(60000, 15*time.Microsecond, 0) }
	return []*pair{
		{conf: serveConfs[0], route: routePerson, bare: bare(), lookupd: r(45000, 27*time.Microsecond, 0)},
		{conf: serveConfs[0], route: routeSigners, bare: bare(), lookupd: r(33000, 38400*time.Nanosecond, 5800*time.Nanosecond)},
		{conf: serveConfs[0], route: routeFive, bare: bare(), lookupd: r(27000, 52*time.Microsecond, 9100*time.Nanosecond)},
		{conf: serveConfs[1], route: routePerson, bare: bare(), lookupd: r(48000, 26*time.Microsecond, 0)},
		{conf: serveConfs[1], route: routeSigners, bare: bare(), lookupd: r(40000, 34500*time.Nanosecond, 300*time.Nanosecond)},
		{conf: serveConfs[1], route: routeFive, bare: bare(), lookupd: r(36000, 41*time.Microsecond, 300*time.Nanosecond)},
	}
}

// TestWriteLedgerCost: a row a route and transport, at one and at five
// signers alike, with the default configuration against the ledger off
// and each against its bare run, and the CPU an answer of lookupd and of
// the NATS server.
func TestWriteLedgerCost(t *testing.T) {
	var b strings.Builder
	writeLedgerCost(&b, fivePairs())
	for _, want := range []string{
		"| GET person | HTTP | 45,000 | 48,000 | **0.94x** | 0.75x | 0.80x | 27.0 µs vs 26.0 µs | n/a | 0 |",
		"| GET signers with expand | HTTP | 33,000 | 40,000 | **0.82x** | 0.55x | 0.67x | 38.4 µs vs 34.5 µs | 5.8 µs vs 0.3 µs | 0 |",
		"| GET signers with expand, five signers | HTTP | 27,000 | 36,000 | **0.75x** | 0.45x | 0.60x | 52.0 µs vs 41.0 µs | 9.1 µs vs 0.3 µs | 0 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	if n := strings.Count(b.String(), "\n| GET "); n != 3 {
		t.Errorf("%d rows, want 3 (one a route; the ledger-off pairs are not rows of their own):\n%s", n, b.String())
	}
	b.Reset()
	writeLedgerCost(&b, fivePairs()[:3])
	if b.String() != "" {
		t.Errorf("no ledger-off run: got %q, want nothing", b.String())
	}
}

// TestWriteGoals: every goal judged on the run's medians, over the
// transport measured: GET person 0.75x of bare (a pass at exactly 0.75),
// GET signers 0.65x of bare, at five signers 0.5x of bare, the ledger
// against the ledger off 0.8x at one and at five signers.
func TestWriteGoals(t *testing.T) {
	var b strings.Builder
	writeGoals(&b, fivePairs())
	want := []string{
		"| GET person | HTTP | the bare server | random ids | 23 | **0.75x** | 0.75x | 0 | pass |",
		"| GET signers with expand | HTTP | the bare server | one person an answer | 23 | **0.55x** | 0.65x | 0 | **fail** |",
		"| GET signers with expand, five signers | HTTP | the bare server | five persons an answer | 45 | **0.45x** | 0.50x | 0 | **fail** |",
		"| GET signers with expand | HTTP | LOOKUP_AUDIT=off | the ledger's cost at one person an answer | 22, 45 | **0.82x** | 0.80x | 0 | pass |",
		"| GET signers with expand, five signers | HTTP | LOOKUP_AUDIT=off | the ledger's cost at five persons an answer | 45 | **0.75x** | 0.80x | 0 | **fail** |",
	}
	got := b.String()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("goals lack %q:\n%s", w, got)
		}
	}
	if n := strings.Count(got, "\n| GET "); n != len(want) {
		t.Errorf("%d goals judged, want %d:\n%s", n, len(want), got)
	}

	pairs := fivePairs()
	pairs[2].lookupd[0].Rate = 30000                           // five signers: 0.50x of bare, 0.83x of off
	pairs[2].lookupd[0].Errors, pairs[2].bare[0].Errors = 3, 1 // beside the verdict, the two runs' errors
	b.Reset()
	writeGoals(&b, pairs)
	for _, w := range []string{
		"| GET signers with expand, five signers | HTTP | the bare server | five persons an answer | 45 | **0.50x** | 0.50x | 4 | pass |",
		"| GET signers with expand, five signers | HTTP | LOOKUP_AUDIT=off | the ledger's cost at five persons an answer | 45 | **0.83x** | 0.80x | 3 | pass |",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("goals lack %q:\n%s", w, b.String())
		}
	}
}

// TestShapeText: the model's paragraph says how many people have how
// many signers.
func TestShapeText(t *testing.T) {
	p, err := fixtures.NewShapedPopulation(fixtures.Shape{People: 1000, Signers: 1000, Five: 20}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shapeText(p), "20 people with 5 signers each, 900 with 1, 80 with none"; got != want {
		t.Errorf("shapeText = %q, want %q", got, want)
	}
	if got, want := shapeText(fixtures.NewPopulation(10, 0, 1)), "10 people with none"; got != want {
		t.Errorf("shapeText = %q, want %q", got, want)
	}
	if got, want := routesText(p), "GET person: all 1,000 people; GET signers with expand: the 900 with one signer; GET signers with expand, five signers: the 20 with 5"; got != want {
		t.Errorf("routesText = %q, want %q", got, want)
	}
}
