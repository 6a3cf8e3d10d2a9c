package soak

import (
	"fmt"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// SoakPhase is what one run of lookupd in a soak came to, as a container
// operator judges it: the cgroup's memory limit (0: none), its OOM kills,
// its peak anonymous memory, the page cache refaults and limit hits under
// the load, the lookups' p99 and errors, and whether lookupd died.
type SoakPhase struct {
	Limit     int64
	OOMKills  uint64
	AnonPeak  int64
	Refaults  uint64
	LimitHits uint64
	P99       time.Duration
	Errors    uint64
	Died      bool
}

// SoakCheck is one criterion of a soak: what it asks, the target, what
// was measured, and whether it passed.
type SoakCheck struct {
	Criterion, Target, Got string
	Pass                   bool
}

// SoakChecks judges the run in a memory limit against the same run
// without one (issue 23): no OOM kill (and lookupd alive to the end),
// anonymous memory at most 3/4 of the limit (the memory budget lookupd
// takes from it), p99 at most twice the run's without a limit, no error.
func SoakChecks(free, limited SoakPhase) []SoakCheck {
	anonMax := limited.Limit / 4 * 3
	p99Max := 2 * free.P99
	return []SoakCheck{
		{Criterion: "OOM kills", Target: "0", Got: fmt.Sprint(limited.OOMKills), Pass: limited.OOMKills == 0 && !limited.Died},
		{Criterion: "anonymous memory, peak", Target: "<= " + mibs(anonMax) + " (3/4 of the limit)", Got: mibs(limited.AnonPeak),
			Pass: limited.AnonPeak <= anonMax},
		{Criterion: "lookups p99", Target: "<= 2x without a limit (" + msf(p99Max) + ")", Got: msf(limited.P99),
			Pass: limited.P99 <= p99Max && !limited.Died},
		{Criterion: "errors", Target: "0", Got: fmt.Sprint(limited.Errors), Pass: limited.Errors == 0 && !limited.Died},
	}
}

// mibs formats bytes as MiB with one decimal.
func mibs(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/loadtest.MiB) }

// msf formats a duration in milliseconds with two decimals.
func msf(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
