package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/accountingload"
	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/cmd/loadtest/internal/soak"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	var err error
	child, err := runChild(ctx, os.Args[1:], os.Stdin, os.Stdout)
	if !child {
		err = run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	}
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadtest:", err)
		os.Exit(1)
	}
}

// runChild runs the command of a process the tool starts of itself (the
// bare server, the NATS server, the broker's round trip) when args name
// one; child is false when they do not.
func runChild(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) (child bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	switch args[0] {
	case bareCommand:
		return true, runBare(ctx, args[1:], stdin, stdout)
	case rttCommand:
		return true, runRTT(ctx, args[1:], stdout)
	case loadtest.BrokerCommand:
		return true, loadtest.RunBroker(ctx, args[1:], stdin, stdout)
	}
	return false, nil
}

// options are the command-line flags.
type options struct {
	lookupd      string
	tool         string
	duration     time.Duration
	warmup       time.Duration
	loneDuration time.Duration // the one-connection runs of lookupd (0: none)
	rounds       int
	threads      int
	connections  int
	tokens       int
	rate         int
	openDuration time.Duration
	openWorkers  int
	profile      string // directory of CPU profiles of lookupd ("": none)
	projection   int    // rounds of the projection against a drain (0: none)
	model        modelOptions
	soak         soak.Options
	accounting   accountingload.Options
}

// modelOptions are the flags of the model and of the ids read.
type modelOptions struct {
	people, signers int
	five            int // people with five signers each (fixtures' Shape.Five); -1 until checkModel sets the default
	seed            uint64
	dir             string // "" until parseFlags sets the default
	rebuild         bool
	ids             string // fixtures.Uniform or fixtures.Zipf
	draws           int
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("loadtest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.lookupd, "lookupd", "", "lookupd binary to start as \"lookupd serve\" (default: go build ./cmd/lookupd into a temporary directory)")
	fs.StringVar(&o.tool, "tool", "auto", "closed-loop load generator: wrk, vegeta, or auto (wrk when on PATH)")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "closed-loop run length per scenario (wrk rounds up to whole seconds)")
	fs.DurationVar(&o.warmup, "warmup", time.Second, "closed-loop warm-up per scenario, not measured (0: none)")
	fs.DurationVar(&o.loneDuration, "lone-duration", 3*time.Second, "run length of lookupd's one-connection closed-loop run of each route, after its warm-up: the latency of a lone request, audited and not (0: none)")
	fs.IntVar(&o.rounds, "rounds", 1, "closed-loop rounds over every scenario; the median req/s of each is reported")
	fs.IntVar(&o.threads, "threads", 2, "wrk threads")
	fs.IntVar(&o.connections, "connections", 64, "closed-loop connections")
	fs.IntVar(&o.tokens, "tokens", 1000, "distinct tokens sent in rotation (by every client, to every server)")
	fs.IntVar(&o.rate, "rate", 10000, "open-loop request rate, req/s (0: no open-loop runs)")
	fs.DurationVar(&o.openDuration, "open-duration", 5*time.Second, "open-loop run length per scenario")
	fs.IntVar(&o.openWorkers, "open-workers", 1000, "open-loop cap on concurrent requests (connections); past it the achieved rate falls short")
	fs.IntVar(&o.projection, "projection-rounds", 1, "rounds of a raw drain of the model's stream and of lookupd project building a read model from it, in turn, after the closed and open loops (0: none)")
	fs.StringVar(&o.profile, "profile", "", "directory to write a CPU profile of lookupd serve (run with --pprof) for each of its closed-loop runs; for finding where the time goes, not for figures")
	modelFlags(fs, &o.model)
	serveFlags, soakLimit := soak.Flags(fs, &o.soak)
	auditServeFlags := accountingload.Flags(fs, &o.accounting)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := checkModel(&o.model); err != nil {
		return o, err
	}
	if err := soak.Check(&o.soak, *serveFlags, *soakLimit); err != nil {
		return o, err
	}
	if err := accountingload.Check(&o.accounting, o.model.seed, *auditServeFlags); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() != 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.tool != "auto" && o.tool != "wrk" && o.tool != "vegeta":
		return o, fmt.Errorf("--tool %q: want wrk, vegeta or auto", o.tool)
	case o.duration <= 0 || o.openDuration <= 0 || o.warmup < 0 || o.loneDuration < 0:
		return o, errors.New("--duration and --open-duration must be positive, --warmup and --lone-duration not negative")
	case o.rounds < 1 || o.threads < 1 || o.connections < 1 || o.tokens < 1 || o.openWorkers < 1 || o.rate < 0:
		return o, errors.New("--rounds, --threads, --connections, --tokens and --open-workers must be at least 1, --rate not negative")
	}
	return o, nil
}
