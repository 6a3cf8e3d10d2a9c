package loadtest

import (
	"fmt"
	"net/http"
)

// The histogram of the audit ledger's group commit on lookupd's /metrics
// (internal/audit): its _count is the messages sent, its _sum the records
// they held.
const (
	metricLedgerMessages = "lookup_audit_records_per_message_count"
	metricLedgerRecords  = "lookup_audit_records_per_message_sum"
)

// LedgerCounts are the messages lookupd's audit ledger sent to the broker
// and the audit records they held: since lookupd started (ReadLedgerCounts)
// or during a run (Since).
type LedgerCounts struct {
	Messages uint64
	Records  uint64
}

// ReadLedgerCounts reads the ledger's counts from /metrics on lookupd's
// admin listener at admin (a base URL). lookupd registers the histogram
// whatever its audit mode: with the ledger off it stays at 0.
func ReadLedgerCounts(c *http.Client, admin string) (LedgerCounts, error) {
	v, err := ReadMetrics(c, admin, metricLedgerMessages, metricLedgerRecords)
	if err != nil {
		return LedgerCounts{}, err
	}
	msgs, ok1 := v[metricLedgerMessages]
	recs, ok2 := v[metricLedgerRecords]
	if !ok1 || !ok2 {
		return LedgerCounts{}, fmt.Errorf("%s/metrics has no %s or %s", admin, metricLedgerMessages, metricLedgerRecords)
	}
	return LedgerCounts{Messages: uint64(msgs), Records: uint64(recs)}, nil
}

// Since returns the counts of what was sent between before and c (c read
// later); zero when a count went back (lookupd restarted in between).
func (c LedgerCounts) Since(before LedgerCounts) LedgerCounts {
	if c.Messages < before.Messages || c.Records < before.Records {
		return LedgerCounts{}
	}
	return LedgerCounts{Messages: c.Messages - before.Messages, Records: c.Records - before.Records}
}
