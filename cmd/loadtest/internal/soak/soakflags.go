package soak

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/dustin/go-humanize"

	"github.com/lookup/persons/internal/testing/testkit"
)

// Options are the flags of the soak (--soak and --soak-*), and those of
// the tool's that it uses (Run sets them).
type Options struct {
	duration    time.Duration // 0: no soak, the load test instead
	people      int
	signers     int
	rate        int
	events      int
	binary      bool // --soak-binary: the events in binary content mode
	interval    time.Duration
	limit       int64 // bytes: the memory limit of the second run
	serveFlags  []string
	tokens      int // --tokens
	openWorkers int // --open-workers
}

// On reports whether a soak is asked for (--soak).
func (so Options) On() bool { return so.duration > 0 }

// Flags defines the flags of the soak on fs, into so; the returned
// strings are --soak-serve-flags and --soak-limit, to be checked by
// Check after parsing.
func Flags(fs *flag.FlagSet, so *Options) (serveFlags, limit *string) {
	fs.DurationVar(&so.duration, "soak", 0, "run a memory soak instead of the load test: lookupd serve this long without a memory limit, then as long within --soak-limit (e.g. 10m; 0: no soak)")
	fs.IntVar(&so.people, "soak-people", 1000000, "soak: consumers in the read model")
	fs.IntVar(&so.signers, "soak-signers", 1000000, "soak: authorized signers in the read model (signer j under consumer j mod --soak-people)")
	fs.IntVar(&so.rate, "soak-rate", 2000, "soak: lookups a second, open loop (GET person and GET signers with expand in turn, random consumers)")
	fs.IntVar(&so.events, "soak-events", 2000, "soak: events a second, updates of random people and signers (0: none)")
	fs.BoolVar(&so.binary, "soak-binary", false, "soak: publish the events in CloudEvents binary content mode (ce- headers), as the CloudEvents SDKs do")
	fs.DurationVar(&so.interval, "soak-interval", 10*time.Second, "soak: interval between memory samples")
	limit = fs.String("soak-limit", "256MiB", "soak: memory limit of the second run (a cgroup's; lookupd takes 3/4 of it as its memory budget)")
	return fs.String("soak-serve-flags", "", "soak: more flags for lookupd serve, shell-quoted (none by default: its defaults are what is measured)"), limit
}

// Check checks the soak's flags, splits serveFlags into so.serveFlags
// and parses limit into so.limit. Without --soak there is nothing to
// check.
func Check(so *Options, serveFlags, limit string) error {
	switch {
	case so.duration < 0:
		return errors.New("--soak must not be negative")
	case so.duration == 0:
		return nil
	case so.people < 1 || so.signers < 0:
		return errors.New("--soak-people must be at least 1, --soak-signers not negative")
	case so.rate < 1 || so.events < 0:
		return errors.New("--soak-rate must be at least 1, --soak-events not negative")
	case so.interval <= 0:
		return errors.New("--soak-interval must be positive")
	}
	n, err := humanize.ParseBytes(limit)
	if err != nil || n < 64<<20 || n > 1<<40 {
		return fmt.Errorf("--soak-limit %q: want a size from 64MiB to 1TiB, such as 256MiB", limit)
	}
	so.limit = int64(n)
	words, err := testkit.ShellSplit(serveFlags)
	if err != nil {
		return fmt.Errorf("--soak-serve-flags: %w", err)
	}
	so.serveFlags = words
	return nil
}
