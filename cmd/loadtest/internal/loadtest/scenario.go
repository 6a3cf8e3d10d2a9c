package loadtest

import (
	"cmp"
	"context"
	"crypto/tls"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Scenario is one measured request: GET URL, sending Tokens in rotation
// as bearer tokens (one a request; none when empty). With Paths, URL is
// the base URL and the requests go to URL+Paths[k] in turn (PathFile holds
// the same paths, one a line, for wrk). Baseline names the scenario its
// throughput is compared with (the bare server answering the same bytes);
// "" for a baseline itself. PID is the process that serves it, 0 for this
// one (the bare server); BrokerPID, when not 0, is the NATS server it
// uses, whose CPU is measured too. TLS is the client configuration of an
// https URL (nil: the default).
type Scenario struct {
	Name      string
	URL       string
	Paths     []string
	PathFile  string
	Tokens    []string
	Baseline  string
	PID       int
	BrokerPID int
	TLS       *tls.Config
}

// Result is what one run of a scenario measured.
type Result struct {
	Scenario string
	Baseline string        // the scenario's Baseline
	Tool     string        // how it was measured, e.g. "wrk -t2 -c64"
	Requests uint64        // requests completed
	Rate     float64       // requests completed per second
	P50, P99 time.Duration // latency quantiles
	Errors   uint64        // transport errors, timeouts and non-2xx answers
	// ErrorKinds counts Errors by kind ("HTTP 503", or the last clause of
	// a transport error, such as "context deadline exceeded"); nil when
	// there were none or the tool does not tell them apart (wrk).
	ErrorKinds map[string]uint64
	// CPUPerRequest is the CPU time the serving process used per request
	// completed; 0 when not measured.
	CPUPerRequest time.Duration
	// BrokerCPUPerRequest is the CPU time the scenario's NATS server used
	// per request completed; 0 when not measured.
	BrokerCPUPerRequest time.Duration
	// Ledger is what lookupd's audit ledger sent to the broker during the
	// run; nil when not read (not lookupd, or its /metrics failed).
	Ledger *LedgerCounts
}

// ClosedLoop measures the throughput of a scenario with a fixed number of
// connections, each sending its next request as soon as the last one is
// answered.
type ClosedLoop interface {
	Run(ctx context.Context, s Scenario, d time.Duration) (Result, error)
	Name() string
	// Lone is the same tool with a single connection (and thread): one
	// request at a time, the next sent when the last is answered.
	Lone() ClosedLoop
}

// ErrorsText returns Errors, followed by its kinds when they are known,
// the most frequent first: "7 (HTTP 503: 5, context deadline exceeded: 2)".
func (r Result) ErrorsText() string {
	if len(r.ErrorKinds) == 0 {
		return strconv.FormatUint(r.Errors, 10)
	}
	kinds := slices.Collect(maps.Keys(r.ErrorKinds))
	slices.SortFunc(kinds, func(a, b string) int {
		return cmp.Or(cmp.Compare(r.ErrorKinds[b], r.ErrorKinds[a]), strings.Compare(a, b))
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = k + ": " + strconv.FormatUint(r.ErrorKinds[k], 10)
	}
	return strconv.FormatUint(r.Errors, 10) + " (" + strings.Join(parts, ", ") + ")"
}
