// Package accountingload is the accounting service's load of
// cmd/loadtest (--accounting-records and --accounting-*): "lookupd audit
// serve" on a synthetic audit ledger kept between runs, its index built
// (killed with SIGKILL and resumed), searched from several connections,
// and compared with a full scan of the stream (Run).
//
// It reads the index and the stream's digest with internal/accounting
// (Digest, ScanDigest, Open, Client), the one package of the service
// that the tool imports beside its test support.
package accountingload
