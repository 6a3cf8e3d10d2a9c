package accountingload

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func TestFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(ao Options) bool
		wantErr string
	}{
		{name: "accounting defaults: 1M persons, killed halfway, under the cache", args: []string{"--accounting-records", "10000000"},
			check: func(ao Options) bool {
				return ao.records == 10000000 && ao.persons == 1000000 && ao.replicas == 8 && ao.maxRecords == 128 &&
					ao.connections == 8 && ao.duration == 20*time.Second && ao.killAt == 0.5 && ao.sample == 200 &&
					ao.pprofDir == "" && len(ao.serveFlags) == 0 && ao.index == "" && ao.searches == nil && strings.HasSuffix(ao.dir, "ledger-10000000-1000000-1")
			}},
		{name: "accounting flags", args: []string{"--accounting-records", "1000", "--accounting-persons", "10", "--accounting-kill-at", "0",
			"--accounting-dir", "/l", "--seed", "4", "--accounting-serve-flags", "--memory-budget 1GiB"}, check: func(ao Options) bool {
			return ao.persons == 10 && ao.killAt == 0 && ao.dir == "/l" && ao.spec(ao.seed).Seed == 4 &&
				strings.Join(ao.serveFlags, "|") == "--memory-budget|1GiB"
		}},
		{name: "accounting on a kept index, some searches", args: []string{"--accounting-records", "1000", "--accounting-index", "/i",
			"--accounting-searches", "month|letter"}, check: func(ao Options) bool {
			return ao.index == "/i" && ao.searches.MatchString("a client's month") && !ao.searches.MatchString("first page, FHIR")
		}},
		{name: "accounting searches not a regular expression", args: []string{"--accounting-records", "1000", "--accounting-searches", "("},
			wantErr: "accounting-searches"},
		{name: "accounting killed at the end", args: []string{"--accounting-records", "1000", "--accounting-kill-at", "1"}, wantErr: "want 0 (no kill) or a fraction below 1"},
		{name: "accounting messages too large", args: []string{"--accounting-records", "1000", "--accounting-max-records", "500"}, wantErr: "1 to 128"},
		{name: "accounting without connections", args: []string{"--accounting-records", "1000", "--accounting-connections", "0"}, wantErr: "--accounting-connections must be at least 1"},
		{name: "negative accounting", args: []string{"--accounting-records", "-1"}, wantErr: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			var ao Options
			serveFlags := Flags(fs, &ao)
			seed := fs.Uint64("seed", 1, "") // the tool's --seed
			err := fs.Parse(tt.args)
			if err == nil {
				err = Check(&ao, *seed, *serveFlags)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(ao) {
				t.Errorf("options %+v do not match the flags %q", ao, tt.args)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ds := make([]time.Duration, 200)
	for i := range ds {
		ds[len(ds)-1-i] = time.Duration(i+1) * time.Millisecond // 1..200 ms, in reverse
	}
	for _, tc := range []struct {
		name string
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{"p50", ds, 50, 100 * time.Millisecond},
		{"p99", ds, 99, 198 * time.Millisecond},
		{"max", ds, 100, 200 * time.Millisecond},
		{"one", ds[:1], 99, 200 * time.Millisecond},
		{"none", nil, 99, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.ds, tc.p); got != tc.want {
				t.Errorf("percentile(%v) = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}
