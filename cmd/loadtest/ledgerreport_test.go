package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// ledgerPair is a pair of conf (an index of serveConfs) on route (an index
// of routeNames) whose lookupd runs are rs and lone runs lone.
func ledgerPair(conf, route int, rs, lone []loadtest.Result, rtt ...loadtest.BrokerRTT) *pair {
	return &pair{conf: serveConfs[conf], route: routeNames[route], lookupd: rs, lone: lone, rtt: rtt}
}

func TestWriteLedgerMessages(t *testing.T) {
	counted := func(requests, msgs, recs uint64) []loadtest.Result {
		return []loadtest.Result{{Rate: float64(requests) / 5, Requests: requests, Ledger: &loadtest.LedgerCounts{Messages: msgs, Records: recs}}}
	}
	tests := []struct {
		name      string
		pairs     []*pair
		want      []string
		wantEmpty bool
	}{
		{name: "under the target", pairs: []*pair{ledgerPair(0, 1, counted(10000, 1000, 10000), nil)},
			want: []string{"64 connections", "| GET signers with expand | HTTP | 10,000 | 1,000 | 10,000 | 1.000 | **0.100** | 10.000 | 0 | pass |"}},
		{name: "over the target", pairs: []*pair{ledgerPair(2, 1, counted(5000, 2000, 30000), nil)},
			want: []string{"| GET signers with expand | HTTPS | 5,000 | 2,000 | 30,000 | 6.000 | **0.400** | 15.000 | 0 | **fail** |"}},
		{name: "the median run's counts", pairs: []*pair{ledgerPair(0, 1, append(append(counted(100, 100, 100), counted(10000, 500, 10000)...), counted(20000, 20000, 20000)...), nil)},
			want: []string{"| GET signers with expand | HTTP | 10,000 | 500 | 10,000 | 1.000 | **0.050** | 20.000 | 0 | pass |"}},
		{name: "counts not read", pairs: []*pair{ledgerPair(0, 0, []loadtest.Result{{Rate: 10, Requests: 50, Errors: 2}}, nil)},
			want: []string{"| GET person | HTTP | 50 | n/a | n/a | n/a | n/a | n/a | 2 | n/a |"}},
		{name: "no answers", pairs: []*pair{ledgerPair(0, 1, counted(0, 1, 1), nil)},
			want: []string{"| GET signers with expand | HTTP | 0 | 1 | 1 | n/a | **n/a** | 1.000 | 0 | n/a |"}},
		{name: "not audited: no record", pairs: []*pair{ledgerPair(0, 0, counted(10000, 0, 0), nil)},
			want: []string{"| GET person | HTTP | 10,000 | 0 | 0 | 0.000 | **n/a** | n/a | 0 | n/a: no record |"}},
		{name: "the ledger off has no row", pairs: []*pair{ledgerPair(1, 0, counted(10000, 0, 0), nil)}, wantEmpty: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeLedgerMessages(&b, 64, tt.pairs)
			checkReport(t, b.String(), tt.wantEmpty, tt.want)
		})
	}
}

func TestWriteLoneRequest(t *testing.T) {
	lone := func(p50, p99 time.Duration, msgs uint64) []loadtest.Result {
		c := &loadtest.LedgerCounts{Messages: msgs, Records: msgs, Commits: msgs, CommitSeconds: float64(msgs) * 90e-6}
		return []loadtest.Result{{Rate: 1000, Requests: 1000, P50: p50, P99: p99, Ledger: c}}
	}
	rtt := loadtest.BrokerRTT{PublishAck: 80 * time.Microsecond, Ping: 30 * time.Microsecond, N: 100}
	off := ledgerPair(1, 1, nil, lone(250*time.Microsecond, 700*time.Microsecond, 0))
	tests := []struct {
		name      string
		pairs     []*pair
		want      []string
		wantEmpty bool
	}{
		{name: "within a round trip", pairs: []*pair{ledgerPair(0, 1, nil, lone(300*time.Microsecond, 900*time.Microsecond, 1000), rtt), off},
			want: []string{"wrk -t1 -c1, 3s a run after a 1s warm-up",
				"| GET signers with expand | HTTP | 300 µs | 250 µs | +50 µs | 900 µs | 700 µs | +200 µs | 80 µs | 30 µs | 90 µs | 1.000 | 0 | pass |"}},
		{name: "more than a round trip", pairs: []*pair{ledgerPair(0, 1, nil, lone(400*time.Microsecond, 600*time.Microsecond, 500), rtt), off},
			want: []string{"| GET signers with expand | HTTP | 400 µs | 250 µs | +150 µs | 600 µs | 700 µs | -100 µs | 80 µs | 30 µs | 90 µs | 0.500 | 0 | **fail** |"}},
		{name: "exactly a round trip", pairs: []*pair{ledgerPair(0, 1, nil, lone(330*time.Microsecond, 700*time.Microsecond, 1000), rtt), off},
			want: []string{"| +80 µs |", "| pass |"}},
		{name: "the median round trip of the rounds",
			pairs: []*pair{ledgerPair(0, 1, nil, lone(300*time.Microsecond, 900*time.Microsecond, 1000),
				loadtest.BrokerRTT{PublishAck: 10 * time.Microsecond}, loadtest.BrokerRTT{PublishAck: 40 * time.Microsecond},
				loadtest.BrokerRTT{PublishAck: 90 * time.Microsecond}), off},
			want: []string{"| +50 µs | 900 µs | 700 µs | +200 µs | 40 µs | 0 µs | 90 µs | 1.000 | 0 | **fail** |"}},
		{name: "not audited: no record", pairs: []*pair{ledgerPair(0, 0, nil, lone(260*time.Microsecond, 700*time.Microsecond, 0), rtt),
			ledgerPair(1, 0, nil, lone(250*time.Microsecond, 700*time.Microsecond, 0))},
			want: []string{"| +10 µs | 700 µs | 700 µs | +0 µs | 80 µs | 30 µs | n/a | 0.000 | 0 | n/a: no record |"}},
		{name: "no round trip measured", pairs: []*pair{ledgerPair(0, 1, nil, lone(300*time.Microsecond, 900*time.Microsecond, 1000)), off},
			want: []string{"| +200 µs | n/a | n/a | 90 µs | 1.000 | 0 | n/a |"}},
		{name: "no run with the ledger off", pairs: []*pair{ledgerPair(0, 1, nil, lone(300*time.Microsecond, 900*time.Microsecond, 1000), rtt)},
			wantEmpty: true},
		{name: "the off run of another transport", pairs: []*pair{ledgerPair(2, 1, nil, lone(300*time.Microsecond, 900*time.Microsecond, 1000), rtt), off},
			wantEmpty: true},
	}
	tool := loadtest.Wrk{Threads: 2, Connections: 64}
	o := options{loneDuration: 3 * time.Second, warmup: time.Second}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeLoneRequest(&b, tool, o, tt.pairs)
			checkReport(t, b.String(), tt.wantEmpty, tt.want)
		})
	}
}

func TestLedgerProgress(t *testing.T) {
	tests := []struct {
		name string
		r    loadtest.Result
		want string
	}{
		{name: "counted", r: loadtest.Result{Requests: 400, Ledger: &loadtest.LedgerCounts{Messages: 20}}, want: ", 0.050 ledger messages an answer"},
		{name: "not lookupd", r: loadtest.Result{Requests: 400}, want: ""},
		{name: "no answers", r: loadtest.Result{Ledger: &loadtest.LedgerCounts{}}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ledgerProgress(tt.r); got != tt.want {
				t.Errorf("ledgerProgress = %q, want %q", got, tt.want)
			}
		})
	}
}

// checkReport fails t unless got is empty (when wantEmpty) and holds each
// of want.
func checkReport(t *testing.T, got string, wantEmpty bool, want []string) {
	t.Helper()
	if wantEmpty && got != "" {
		t.Errorf("got %q, want nothing", got)
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("got\n%s\nwant it to hold %q", got, w)
		}
	}
}
