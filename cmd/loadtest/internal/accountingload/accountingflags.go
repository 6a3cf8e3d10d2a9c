package accountingload

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"time"

	"github.com/lookup/persons/internal/testing/fixtures"
	"github.com/lookup/persons/internal/testing/testkit"
)

// Options are the flags of the accounting measurement
// (--accounting-records and --accounting-*), and the tool's it uses.
type Options struct {
	records     int // 0: no accounting measurement
	persons     int
	replicas    int
	maxRecords  int
	dir         string // "" until checkAccounting sets the default
	connections int
	duration    time.Duration
	killAt      float64 // fraction of the ledger indexed when audit serve is killed (0: never)
	sample      int     // persons whose whole history is compared through the API
	pprofDir    string
	serveFlags  []string
	// index is where audit serve's index is kept between runs ("": in
	// the run's directory, built from empty each run); searches, which
	// kinds of search are measured (nil: all).
	index    string
	searches *regexp.Regexp
	seed     uint64 // --seed (Check sets it)
	rebuild  bool   // --rebuild (Run sets it)
}

// On reports whether the accounting measurement is asked for
// (--accounting-records).
func (ao Options) On() bool { return ao.records > 0 }

// Flags defines the accounting measurement's flags on fs, into
// ao; the returned string is --accounting-serve-flags, to be split by
// Check after parsing.
func Flags(fs *flag.FlagSet, ao *Options) *string {
	fs.IntVar(&ao.records, "accounting-records", 0, "measure lookupd audit serve instead of the load test, on an audit ledger of this many records (e.g. 10000000; 0: no)")
	fs.IntVar(&ao.persons, "accounting-persons", 1000000, "accounting: persons disclosed in the ledger (skewed: the most disclosed have about 2,000 records in 10M)")
	fs.IntVar(&ao.replicas, "accounting-replicas", 8, "accounting: replicas whose chains the ledger holds")
	fs.IntVar(&ao.maxRecords, "accounting-max-records", 128, "accounting: records a message of the ledger at most (each 1 to this many, at random)")
	fs.StringVar(&ao.dir, "accounting-dir", "", "accounting: where the filled ledger (a NATS store) is kept between runs (default: lookupd-loadtest/ledger-<records>-<persons>-<seed> under the user's cache directory)")
	fs.IntVar(&ao.connections, "accounting-connections", 8, "accounting: connections searching at once")
	fs.DurationVar(&ao.duration, "accounting-duration", 20*time.Second, "accounting: how long each kind of search runs")
	fs.Float64Var(&ao.killAt, "accounting-kill-at", 0.5, "accounting: SIGKILL audit serve once it has indexed this fraction of the ledger, and restart it (0: no kill)")
	fs.IntVar(&ao.sample, "accounting-sample", 200, "accounting: persons whose whole history is read through the API and compared with a full scan of the stream")
	fs.StringVar(&ao.pprofDir, "accounting-pprof", "", "accounting: directory to write CPU profiles of audit serve into (the index build, the searches) and its heap (none: no profiles)")
	fs.StringVar(&ao.index, "accounting-index", "", "accounting: where audit serve's index is kept between runs: built from empty (and kept) when the directory is empty or absent, else searched as it is once caught up with the stream, neither rebuilt nor killed (none: in the run's directory, built from empty each run)")
	fs.Func("accounting-searches", "accounting: measure only the kinds of search whose names match this regular expression, and the baseline (none: every kind)", func(s string) error {
		re, err := regexp.Compile(s)
		ao.searches = re
		return err
	})
	return fs.String("accounting-serve-flags", "", "accounting: more flags for lookupd audit serve, shell-quoted (e.g. --memory-budget 256MiB)")
}

// Check checks the accounting measurement's flags, splits
// serveFlags and sets the default --accounting-dir. Without
// --accounting-records there is nothing to check.
func Check(ao *Options, seed uint64, serveFlags string) error {
	ao.seed = seed
	switch {
	case ao.records < 0:
		return errors.New("--accounting-records must not be negative")
	case ao.records == 0:
		return nil
	case ao.persons < 1 || ao.replicas < 1 || ao.maxRecords < 1 || ao.maxRecords > 128:
		return errors.New("--accounting-persons and --accounting-replicas must be at least 1, --accounting-max-records 1 to 128")
	case ao.connections < 1 || ao.duration <= 0 || ao.sample < 0:
		return errors.New("--accounting-connections must be at least 1, --accounting-duration positive, --accounting-sample not negative")
	case ao.killAt < 0 || ao.killAt >= 1:
		return fmt.Errorf("--accounting-kill-at %v: want 0 (no kill) or a fraction below 1", ao.killAt)
	}
	words, err := testkit.ShellSplit(serveFlags)
	if err != nil {
		return fmt.Errorf("--accounting-serve-flags: %w", err)
	}
	ao.serveFlags = words
	if ao.dir == "" {
		ao.dir = DefaultLedgerDir(ao.spec(seed))
	}
	return nil
}

// spec is the ledger these options ask for.
func (ao Options) spec(seed uint64) fixtures.LedgerSpec {
	return fixtures.LedgerSpec{Version: fixtures.LedgerVersion, Records: ao.records, Persons: ao.persons,
		Replicas: ao.replicas, MaxRecords: ao.maxRecords, Seed: seed}
}
