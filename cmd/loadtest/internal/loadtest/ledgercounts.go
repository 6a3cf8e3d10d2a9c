package loadtest

import (
	"fmt"
	"net/http"
	"time"
)

// The histograms of the audit ledger on lookupd's /metrics
// (internal/ledger): records a message, whose _count is the messages sent
// and _sum the records they held, and the time from sending a message to
// its acknowledgement.
const (
	metricLedgerMessages      = "lookup_audit_records_per_message_count"
	metricLedgerRecords       = "lookup_audit_records_per_message_sum"
	metricLedgerCommits       = "lookup_audit_commit_seconds_count"
	metricLedgerCommitSeconds = "lookup_audit_commit_seconds_sum"
)

// LedgerCounts are the messages lookupd's audit ledger sent to the broker,
// the audit records they held, and the messages acknowledged with the
// time they took (sending to acknowledgement, summed): since lookupd
// started (ReadLedgerCounts) or during a run (Since).
type LedgerCounts struct {
	Messages      uint64
	Records       uint64
	Commits       uint64
	CommitSeconds float64
}

// CommitMean is the mean time from sending a message to its
// acknowledgement, 0 when none was acknowledged.
func (c LedgerCounts) CommitMean() time.Duration {
	if c.Commits == 0 {
		return 0
	}
	return time.Duration(c.CommitSeconds / float64(c.Commits) * float64(time.Second))
}

// ReadLedgerCounts reads the ledger's counts from /metrics on lookupd's
// admin listener at admin (a base URL). lookupd registers the histogram
// whatever its audit mode: with the ledger off it stays at 0.
func ReadLedgerCounts(c *http.Client, admin string) (LedgerCounts, error) {
	names := []string{metricLedgerMessages, metricLedgerRecords, metricLedgerCommits, metricLedgerCommitSeconds}
	v, err := ReadMetrics(c, admin, names...)
	if err != nil {
		return LedgerCounts{}, err
	}
	for _, n := range names {
		if _, ok := v[n]; !ok {
			return LedgerCounts{}, fmt.Errorf("%s/metrics has no %s", admin, n)
		}
	}
	return LedgerCounts{Messages: uint64(v[metricLedgerMessages]), Records: uint64(v[metricLedgerRecords]),
		Commits: uint64(v[metricLedgerCommits]), CommitSeconds: v[metricLedgerCommitSeconds]}, nil
}

// Since returns the counts of what was sent between before and c (c read
// later); zero when a count went back (lookupd restarted in between).
func (c LedgerCounts) Since(before LedgerCounts) LedgerCounts {
	if c.Messages < before.Messages || c.Records < before.Records || c.Commits < before.Commits {
		return LedgerCounts{}
	}
	return LedgerCounts{Messages: c.Messages - before.Messages, Records: c.Records - before.Records,
		Commits: c.Commits - before.Commits, CommitSeconds: c.CommitSeconds - before.CommitSeconds}
}
