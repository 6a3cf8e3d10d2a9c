// Package accountingload is the accounting service's load of
// cmd/loadtest (--accounting-records and --accounting-*): "lookupd audit
// serve" on a synthetic audit ledger kept between runs, its index built
// (killed with SIGKILL and resumed), searched from several connections,
// and compared with a full scan of the stream (Run).
//
// It reads the index's and the stream's digests and the FHIR search
// through the service's test support (internal/testing/accountingtest:
// Digest, ScanDigest, IndexDigest, SearchClient), as the rest of the tool
// reaches no internal package but test support.
package accountingload
