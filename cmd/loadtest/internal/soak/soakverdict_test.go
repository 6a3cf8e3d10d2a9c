package soak

import (
	"testing"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// TestSoakChecks judges runs in a 256 MiB limit against a run without one.
func TestSoakChecks(t *testing.T) {
	free := SoakPhase{AnonPeak: 140 * loadtest.MiB, P99: 10 * time.Millisecond}
	good := SoakPhase{Limit: 256 * loadtest.MiB, AnonPeak: 192 * loadtest.MiB, P99: 20 * time.Millisecond, Refaults: 1e6}
	tests := []struct {
		name    string
		limited SoakPhase
		want    []bool // OOM kills, anonymous, p99, errors
	}{
		{"all within", good, []bool{true, true, true, true}},
		{"an OOM kill", with(good, func(p *SoakPhase) { p.OOMKills = 1 }), []bool{false, true, true, true}},
		{"anonymous past 3/4 of the limit", with(good, func(p *SoakPhase) { p.AnonPeak = 192*loadtest.MiB + 1 }), []bool{true, false, true, true}},
		{"p99 past twice", with(good, func(p *SoakPhase) { p.P99 = 20*time.Millisecond + 1 }), []bool{true, true, false, true}},
		{"errors", with(good, func(p *SoakPhase) { p.Errors = 3 }), []bool{true, true, true, false}},
		{"died", with(good, func(p *SoakPhase) { p.Died = true }), []bool{false, true, false, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := SoakChecks(free, tt.limited)
			if len(got) != len(tt.want) {
				t.Fatalf("%d checks, want %d", len(got), len(tt.want))
			}
			for i, c := range got {
				if c.Pass != tt.want[i] {
					t.Errorf("%s: pass %v (got %s, target %s), want %v", c.Criterion, c.Pass, c.Got, c.Target, tt.want[i])
				}
			}
		})
	}
}

// with returns p changed by f.
func with(p SoakPhase, f func(*SoakPhase)) SoakPhase {
	f(&p)
	return p
}
