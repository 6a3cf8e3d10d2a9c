package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/loadtest"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(o options) bool
		wantErr string
	}{
		{name: "defaults", check: func(o options) bool {
			return o.tool == "auto" && o.duration == 5*time.Second && o.connections == 64 && o.threads == 2 &&
				o.tokens == 1000 && o.rate == 10000 && o.rounds == 1
		}},
		{name: "flags", args: []string{"--duration", "10s", "--rate", "5000", "--tool", "vegeta", "--rounds", "3"},
			check: func(o options) bool {
				return o.duration == 10*time.Second && o.rate == 5000 && o.tool == "vegeta" && o.rounds == 3
			}},
		{name: "no open loop", args: []string{"--rate", "0"}, check: func(o options) bool { return o.rate == 0 }},
		{name: "unknown tool", args: []string{"--tool", "ab"}, wantErr: "want wrk, vegeta or auto"},
		{name: "zero duration", args: []string{"--duration", "0s"}, wantErr: "must be positive"},
		{name: "no tokens", args: []string{"--tokens", "0"}, wantErr: "at least 1"},
		{name: "stray argument", args: []string{"now"}, wantErr: "unexpected arguments"},
		{name: "no soak by default", check: func(o options) bool { return o.soak.duration == 0 }},
		{name: "soak defaults: issue 9's sizes", args: []string{"--soak", "10m"}, check: func(o options) bool {
			so := o.soak
			return so.duration == 10*time.Minute && so.people == 1000000 && so.signers == 1000000 &&
				so.rate == 2000 && so.events == 2000 && so.interval == 10*time.Second && len(so.serveFlags) == 0
		}},
		{name: "soak flags", args: []string{"--soak", "5m", "--soak-people", "500000", "--soak-signers", "0", "--soak-events", "0",
			"--soak-serve-flags", "--memory-budget '256MiB'"}, check: func(o options) bool {
			so := o.soak
			return so.duration == 5*time.Minute && so.people == 500000 && so.signers == 0 && so.events == 0 &&
				strings.Join(so.serveFlags, "|") == "--memory-budget|256MiB"
		}},
		{name: "soak without people", args: []string{"--soak", "1m", "--soak-people", "0"}, wantErr: "--soak-people must be at least 1"},
		{name: "soak without lookups", args: []string{"--soak", "1m", "--soak-rate", "0"}, wantErr: "--soak-rate must be at least 1"},
		{name: "soak interval", args: []string{"--soak", "1m", "--soak-interval", "0s"}, wantErr: "--soak-interval must be positive"},
		{name: "negative soak", args: []string{"--soak", "-1m"}, wantErr: "must not be negative"},
		{name: "soak serve flags unquoted", args: []string{"--soak", "1m", "--soak-serve-flags", "--a 'b"}, wantErr: "--soak-serve-flags"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseFlags(tt.args, io.Discard)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(o) {
				t.Errorf("options %+v do not match the flags %q", o, tt.args)
			}
		})
	}
}

func TestTokenTTL(t *testing.T) {
	short := options{rounds: 1, duration: 5 * time.Second, warmup: time.Second, openDuration: 5 * time.Second}
	if got := tokenTTL(short); got < time.Hour+40*time.Second || got > time.Hour+2*time.Minute {
		t.Errorf("tokenTTL(a short run) = %v, want about 1h1m", got)
	}
	long := options{rounds: 10, duration: 10 * time.Minute, openDuration: 10 * time.Minute}
	if got, least := tokenTTL(long), 10*4*10*time.Minute+4*10*time.Minute; got < least {
		t.Errorf("tokenTTL(a long run) = %v, want at least the run, %v", got, least)
	}
}

func TestMedian(t *testing.T) {
	rs := []loadtest.Result{{Rate: 3, Requests: 30}, {Rate: 1, Requests: 10}, {Rate: 2, Requests: 20}}
	if got := median(rs); got.Requests != 20 {
		t.Errorf("median = %+v, want the run of rate 2", got)
	}
	if got := median(rs[:1]); got.Requests != 30 {
		t.Errorf("median of one = %+v, want it", got)
	}
}

func TestWriteReport(t *testing.T) {
	o := options{duration: 5 * time.Second, warmup: time.Second, rounds: 3, rate: 10000, openDuration: 5 * time.Second}
	m := machine{When: time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC), CPUs: 2, Model: "Xeon", LoadAvg: "1.50", Lookupd: "lookupd v1"}
	closed := []loadtest.Result{{Scenario: "bare", Tool: "wrk", Rate: 60000}, {Scenario: "lookupd", Baseline: "bare", Tool: "wrk", Rate: 54000}}
	open := []loadtest.Result{{Scenario: "lookupd", Tool: "vegeta", Rate: 10000, P99: time.Millisecond}}
	var b strings.Builder
	writeReport(&b, o, loadtest.Vegeta{Connections: 64}, m, closed, open)
	for _, want := range []string{"2026-11-23 07:00 UTC", "2 CPUs (Xeon)", "load average 1.50", "lookupd v1",
		"median of 3 rounds", "| lookupd | wrk | 54,000 |", "0.90x", "fixed 10,000 req/s", "| lookupd | vegeta | 10,000 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteAuditRatio(t *testing.T) {
	tests := []struct {
		name   string
		closed []loadtest.Result
		want   string
	}{
		{"both measured", []loadtest.Result{
			{Scenario: "bare", Rate: 100},
			{Scenario: "lookupd GET signers (5) with expand, one token", Rate: 1000},
			{Scenario: AuditedScenario, Rate: 750},
		}, "at 0.75x of the same GET with auditing off (750 vs 1,000 req/s)"},
		{"no audited run", []loadtest.Result{{Scenario: "lookupd GET signers (5) with expand, one token", Rate: 1000}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeAuditRatio(&b, tt.closed)
			if got := b.String(); (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("got %q, want it to hold %q", got, tt.want)
			}
		})
	}
}
