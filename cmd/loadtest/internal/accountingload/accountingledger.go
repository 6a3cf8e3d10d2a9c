package accountingload

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// auditLedger is the audit ledger an accounting measurement runs on: its
// broker running on its store (in this process), and what filled it.
type auditLedger struct {
	dir    string
	man    LedgerManifest
	broker *loadtest.NATS
	nc     *nats.Conn
	js     jetstream.JetStream
	reused bool
	// verified is what "lookupd audit verify" said of a ledger just
	// filled, and how long it took ("" when reused).
	verified   string
	verifyTook time.Duration
}

// close stops the broker. The searches' own records stay in the ledger:
// the next run's ledger holds them too, after the filled ones.
func (l *auditLedger) close() {
	if l.nc != nil {
		l.nc.Close()
	}
	l.broker.Close()
}

// lastSeq returns the stream's last sequence now.
func (l *auditLedger) lastSeq(ctx context.Context) (uint64, error) {
	s, err := l.js.Stream(ctx, loadtest.AuditStream)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// openLedger opens the ledger ao asks for in its directory, filling it
// when no complete one is there (or --rebuild): the audit stream created,
// every message published, "lookupd audit verify" run on it, the manifest
// written last.
func openLedger(ctx context.Context, o Options, bin string, progress io.Writer) (_ *auditLedger, err error) {
	ao, spec := o, o.spec(o.seed)
	man, ok, err := ReadLedgerManifest(ao.dir)
	why := ""
	switch {
	case err != nil:
		why = err.Error()
	case !ok:
		why = "none yet"
	case man.LedgerSpec != spec:
		why = fmt.Sprintf("the ledger is %+v, want %+v", man.LedgerSpec, spec)
	case o.rebuild:
		why = "--rebuild"
	}
	l := &auditLedger{dir: ao.dir, man: man, reused: why == ""}
	if !l.reused {
		fmt.Fprintf(progress, "filling the ledger in %s (%s) ...\n", ao.dir, why)
		if err := removeLedger(ao.dir); err != nil {
			return nil, err
		}
	} else {
		fmt.Fprintf(progress, "reusing the ledger in %s (filled %s)\n", ao.dir, man.Built.Format(time.RFC3339))
	}
	if err := os.MkdirAll(ao.dir, 0o700); err != nil {
		return nil, err
	}
	if l.broker, err = loadtest.StartNATS("loadtest-ledger", filepath.Join(ao.dir, LedgerNATSDir)); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	if l.nc, err = nats.Connect(l.broker.URL, nats.Name("lookupd-loadtest-ledger")); err != nil {
		return nil, fmt.Errorf("connect to the ledger's NATS server: %w", err)
	}
	if l.js, err = jetstream.New(l.nc, jetstream.WithPublishAsyncMaxPending(LedgerWindow)); err != nil {
		return nil, err
	}
	if l.reused {
		return l, l.check(ctx)
	}
	return l, l.fill(ctx, spec, bin, progress)
}

// check checks that a reused ledger's stream starts where a fill does and
// holds at least what the fill published.
func (l *auditLedger) check(ctx context.Context) error {
	s, err := l.js.Stream(ctx, loadtest.AuditStream)
	if err != nil {
		return fmt.Errorf("the ledger's audit stream: %w: run with --rebuild", err)
	}
	if st := s.CachedInfo().State; st.FirstSeq != 1 || st.LastSeq < l.man.LastSeq {
		return fmt.Errorf("the ledger's stream holds %d-%d, its manifest says 1-%d: run with --rebuild", st.FirstSeq, st.LastSeq, l.man.LastSeq)
	}
	return nil
}

// fill fills the ledger, verifies it and writes its manifest.
func (l *auditLedger) fill(ctx context.Context, spec fixtures.LedgerSpec, bin string, progress io.Writer) error {
	next := time.Now().Add(10 * time.Second)
	man, err := FillLedger(ctx, l.js, loadtest.AuditStream, spec, func(records int) {
		if time.Now().After(next) {
			fmt.Fprintf(progress, "  %d of %d records published\n", records, spec.Records)
			next = time.Now().Add(10 * time.Second)
		}
	})
	if err != nil {
		return fmt.Errorf("fill the ledger: %w", err)
	}
	fmt.Fprintf(progress, "%d records in %d messages published in %v; verifying ...\n", spec.Records, man.Messages, man.FillTime.Round(time.Second))
	start := time.Now()
	cmd := exec.CommandContext(ctx, bin, "audit", "verify", "--nats-url", l.broker.URL, "--audit-stream", loadtest.AuditStream) //nolint:gosec // G204: the lookupd binary
	out, err := cmd.CombinedOutput()
	l.verifyTook = time.Since(start)
	if err != nil {
		return fmt.Errorf("lookupd audit verify on the filled ledger: %w\n%s", err, out)
	}
	l.verified = firstLine(string(out)) + ": " + lastLine(string(out))
	l.man = man
	return WriteLedgerManifest(l.dir, man)
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(line)
}

// lastLine returns the last line of s that is not blank.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// removeLedger removes the ledger in dir, refusing a directory that holds
// anything a ledger does not (an --accounting-dir given by mistake).
func removeLedger(dir string) error {
	return loadtest.RemoveKept(dir, IsLedgerFile, "ledger", "--accounting-dir")
}
