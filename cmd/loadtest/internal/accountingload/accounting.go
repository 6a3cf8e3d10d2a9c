package accountingload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/accountingtest"
)

// accountingResult is what an accounting measurement found.
type accountingResult struct {
	ledger    *auditLedger
	stream    uint64        // the stream's last sequence the index was built to
	natsBytes int64         // the broker's store on disk
	build     build         // the index built (killed and resumed)
	scanTook  time.Duration // a full scan of the stream by this tool
	scan      *accountingtest.Digest
	sample    sampleCheck
	searches  []searchRun
	memBuild  memPeak
	memSearch memPeak
	full      fullCheck
}

// Run measures "lookupd audit serve" on a ledger of
// o.records records: the ledger opened (filled the first time),
// the index built from empty (SIGKILLed and resumed at
// o.killAt), the stream scanned once by this tool, sampled
// persons' whole histories read through the API and compared with the
// scan, each kind of search measured, the service stopped and its whole
// index compared with the scan. It writes the report as Markdown on
// stdout.
func Run(ctx context.Context, o Options, rebuild bool, bin, dir string, stdout, stderr io.Writer) (err error) {
	o.rebuild = rebuild
	ao := o
	mach := loadtest.ReadMachine(ctx, bin)
	l, err := openLedger(ctx, o, bin, stderr)
	if err != nil {
		return err
	}
	defer l.close()
	res := accountingResult{ledger: l}
	if res.stream, err = l.lastSeq(ctx); err != nil {
		return err
	}
	res.natsBytes = loadtest.DiskUsage(filepath.Join(l.dir, LedgerNATSDir))
	jwks, toks, err := accountingTokens(ctx, bin, dir, ao.connections)
	if err != nil {
		return err
	}
	svc := newAuditService(o, bin, dir, l.broker.URL, jwks)
	defer svc.mem.close()
	defer func() {
		if serr := svc.stop(); serr != nil && err == nil {
			err = serr
		}
	}()
	fmt.Fprintf(stderr, "building the index of %d messages ...\n", res.stream)
	if res.build, err = svc.buildIndex(ctx, res.stream, ao.killAt, ao.index != "", stderr); err != nil {
		return err
	}
	svc.mem.enter("search")
	res.memBuild = svc.mem.peak("build")
	fmt.Fprintf(stderr, "index built in %v; scanning the stream ...\n", res.build.Took().Round(time.Second))
	start := time.Now()
	if res.scan, err = accountingtest.ScanDigest(ctx, l.js, loadtest.AuditStream, res.stream); err != nil {
		return err
	}
	res.scanTook = time.Since(start)
	s := newSearcher(svc, toks, o.spec(o.seed), o.seed, ao.searches)
	fmt.Fprintf(stderr, "reading %d persons' whole histories to compare ...\n", ao.sample)
	if res.sample, err = s.checkSample(ctx, ao.sample, res.scan); err != nil {
		return err
	}
	if res.searches, err = s.measure(ctx, ao.duration, stderr); err != nil {
		return err
	}
	res.memSearch = svc.mem.peak("search")
	if err := svc.stop(); err != nil {
		return err
	}
	fmt.Fprintln(stderr, "comparing the whole index with the scan ...")
	if res.full, err = checkIndex(svc.cfg.IndexDir, res.stream, res.scan); err != nil {
		return err
	}
	writeAccountingReport(stdout, o, mach, res)
	if len(res.full.Diff) > 0 || len(res.sample.Diff) > 0 {
		return errors.New("the index differs from a full scan of the stream (see the report)")
	}
	return nil
}

// accountingTokens makes a key in dir, writes its JWKS there and mints n
// tokens with the scope read:audit.
func accountingTokens(ctx context.Context, bin, dir string, n int) (jwksPath string, toks []string, err error) {
	keyPath, jwksPath, err := loadtest.CreateKeyIn(ctx, bin, dir)
	if err != nil {
		return "", nil, err
	}
	toks, err = loadtest.MintTokens(ctx, bin, keyPath, "read:audit", 12*time.Hour, n)
	return jwksPath, toks, err
}
