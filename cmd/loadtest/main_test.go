package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
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
				o.tokens == 1000 && o.rate == 10000 && o.rounds == 1 && o.loneDuration == 3*time.Second
		}},
		{name: "no lone runs", args: []string{"--lone-duration", "0s"}, check: func(o options) bool { return o.loneDuration == 0 }},
		{name: "negative lone runs", args: []string{"--lone-duration", "-1s"}, wantErr: "not negative"},
		{name: "flags", args: []string{"--duration", "10s", "--rate", "5000", "--tool", "vegeta", "--rounds", "3"},
			check: func(o options) bool {
				return o.duration == 10*time.Second && o.rate == 5000 && o.tool == "vegeta" && o.rounds == 3
			}},
		{name: "no open loop", args: []string{"--rate", "0"}, check: func(o options) bool { return o.rate == 0 }},
		{name: "unknown tool", args: []string{"--tool", "ab"}, wantErr: "want wrk, vegeta or auto"},
		{name: "zero duration", args: []string{"--duration", "0s"}, wantErr: "must be positive"},
		{name: "no tokens", args: []string{"--tokens", "0"}, wantErr: "at least 1"},
		{name: "stray argument", args: []string{"now"}, wantErr: "unexpected arguments"},
		{name: "no soak by default", check: func(o options) bool { return !o.soak.On() }},
		{name: "model defaults: 1M + 1M, uniform ids, under the cache", check: func(o options) bool {
			mo := o.model
			return mo.people == 1000000 && mo.signers == 1080000 && mo.seed == 1 && mo.ids == fixtures.Uniform &&
				mo.draws == 1000000 && !mo.rebuild && mo.five == 20000 && strings.HasSuffix(mo.dir, "model-1000000-1080000-five20000-1")
		}},
		{name: "model flags", args: []string{"--people", "200", "--signers", "300", "--model-dir", "/m", "--ids", "zipf", "--rebuild", "--seed", "3"},
			check: func(o options) bool {
				mo := o.model
				return mo.people == 200 && mo.signers == 300 && mo.five == 4 && mo.dir == "/m" && mo.ids == fixtures.Zipf && mo.rebuild && mo.seed == 3
			}},
		{name: "five-signer people by default: a fiftieth, with their signers", args: []string{"--people", "200"},
			check: func(o options) bool {
				return o.model.five == 4 && o.model.signers == 216 && strings.HasSuffix(o.model.dir, "model-200-216-five4-1")
			}},
		{name: "five-signer people by default: as many as the signers allow", args: []string{"--people", "200", "--signers", "210"},
			check: func(o options) bool { return o.model.five == 2 }},
		{name: "one signer a person", args: []string{"--people", "200", "--signers", "200"},
			check: func(o options) bool { return o.model.five == 0 }},
		{name: "five-signer people asked for", args: []string{"--people", "200", "--five-signers", "40"},
			check: func(o options) bool { return o.model.five == 40 && o.model.signers == 360 }},
		{name: "five-signer people without their signers", args: []string{"--people", "200", "--signers", "300", "--five-signers", "26"},
			wantErr: "take 304"},
		{name: "people without a signer", args: []string{"--people", "200", "--signers", "0"}, wantErr: "a signer for every person"},
		{name: "negative five-signer people", args: []string{"--five-signers", "-2"}, wantErr: "must not be negative"},
		{name: "no people", args: []string{"--people", "0"}, wantErr: "--people must be at least 1"},
		{name: "unknown ids", args: []string{"--ids", "normal"}, wantErr: "want uniform or zipf"},
		{name: "no draws", args: []string{"--draws", "0"}, wantErr: "--draws must be at least 1"},
		{name: "no accounting measurement by default", check: func(o options) bool { return !o.accounting.On() }},
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
	// 24 runs a round: 4 configurations, 3 routes, a bare and a lookupd
	// run of each.
	short := options{rounds: 1, duration: 5 * time.Second, warmup: time.Second, openDuration: 5 * time.Second}
	if got := tokenTTL(short); got < time.Hour+4*time.Minute || got > time.Hour+7*time.Minute {
		t.Errorf("tokenTTL(a short run) = %v, want about 1h5m", got)
	}
	long := options{rounds: 10, duration: 10 * time.Minute, openDuration: 10 * time.Minute}
	if got, least := tokenTTL(long), 10*24*10*time.Minute+24*10*time.Minute; got < least {
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

// TestProfileName: a scenario's profile file is its name in lower case,
// every other run of characters one dash.
func TestProfileName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"round 1 lookupd GET person, default (ledger required), HTTP", "round-1-lookupd-get-person-default-ledger-required-http.pprof"},
		{"LOOKUP_AUDIT=off, HTTPS", "lookup-audit-off-https.pprof"},
		{"--x--", "x.pprof"},
	} {
		if got := profileName(tc.in); got != tc.want {
			t.Errorf("profileName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
