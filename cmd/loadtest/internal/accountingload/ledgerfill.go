package accountingload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// LedgerWindow is how many messages FillLedger has in flight at most
// (about 20 MiB): give jetstream.New
// jetstream.WithPublishAsyncMaxPending(LedgerWindow).
const LedgerWindow = 512

// ledgerManifestFile describes a filled ledger directory; it is written
// last, so a fill cut short is never reused.
const ledgerManifestFile = "ledger.json"

// LedgerNATSDir is the broker's store in a ledger directory.
const LedgerNATSDir = "nats"

// LedgerManifest describes a filled ledger: its spec, the stream filled
// and what the fill did.
type LedgerManifest struct {
	fixtures.LedgerSpec
	Stream   string        `json:"stream"`
	LastSeq  uint64        `json:"last_seq"` // the stream's last sequence once filled
	Messages int           `json:"messages"`
	Built    time.Time     `json:"built"`
	FillTime time.Duration `json:"fill_time_ns"`
}

// ReadLedgerManifest returns the manifest of the ledger in dir; ok is
// false when there is none.
func ReadLedgerManifest(dir string) (m LedgerManifest, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, ledgerManifestFile)) //nolint:gosec // G304: the ledger directory
	if errors.Is(err, fs.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, false, fmt.Errorf("%s: %w", filepath.Join(dir, ledgerManifestFile), err)
	}
	return m, true, nil
}

// WriteLedgerManifest writes m into dir atomically: the last step of a
// fill.
func WriteLedgerManifest(dir string, m LedgerManifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return loadtest.WriteFileSync(filepath.Join(dir, ledgerManifestFile), append(b, '\n'))
}

// IsLedgerFile reports whether name is the name of an entry of a ledger
// directory.
func IsLedgerFile(name string) bool {
	return name == LedgerNATSDir || name == ledgerManifestFile || name == ledgerManifestFile+".tmp"
}

// DefaultLedgerDir returns where the ledger of spec is kept by default:
// under the user's cache directory (os.UserCacheDir), else the temporary
// one, beside the load test's models.
func DefaultLedgerDir(spec fixtures.LedgerSpec) string {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "lookupd-loadtest", fmt.Sprintf("ledger-%d-%d-%d", spec.Records, spec.Persons, spec.Seed))
}

// FillLedger creates the audit stream stream on js (as deployed:
// loadtest.AuditStreamFile; it must not exist) and publishes the messages of spec into it,
// asynchronously, LedgerWindow at most in flight (published in order on
// one connection, each chain is stored in order). progress, when not nil,
// is called every 10,000 messages with the records published. It returns
// the manifest of the filled ledger, to write once the caller is done.
func FillLedger(ctx context.Context, js jetstream.JetStream, stream string, spec fixtures.LedgerSpec, progress func(records int)) (LedgerManifest, error) {
	start := time.Now()
	man := LedgerManifest{LedgerSpec: spec, Stream: stream}
	cfg, err := loadtest.DeployedStream(loadtest.AuditStreamFile, stream)
	if err != nil {
		return man, err
	}
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return man, fmt.Errorf("create audit stream %s: %w", stream, err)
	}
	l := fixtures.NewLedger(spec)
	pending := make([]jetstream.PubAckFuture, 0, LedgerWindow)
	for {
		subject, data, _, ok, err := l.Next()
		if err != nil {
			return man, err
		}
		if !ok {
			break
		}
		if len(pending) == cap(pending) {
			// Await the older half: the newer stays in flight meanwhile.
			seq, err := fixtures.AwaitAcks(ctx, pending[:LedgerWindow/2])
			if err != nil {
				return man, err
			}
			man.LastSeq = max(man.LastSeq, seq)
			pending = append(pending[:0], pending[LedgerWindow/2:]...)
		}
		f, err := js.PublishMsgAsync(&nats.Msg{Subject: subject, Data: data})
		if err != nil {
			return man, fmt.Errorf("publish audit message %d: %w", man.Messages+1, err)
		}
		pending = append(pending, f)
		if man.Messages++; progress != nil && man.Messages%10000 == 0 {
			progress(l.Written())
		}
	}
	seq, err := fixtures.AwaitAcks(ctx, pending)
	if err != nil {
		return man, err
	}
	man.LastSeq = max(man.LastSeq, seq)
	man.Built, man.FillTime = time.Now().UTC(), time.Since(start)
	return man, nil
}
