package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/accountingload"
	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/cmd/loadtest/internal/soak"
)

// runsPerRound is how many closed-loop runs a round has: a bare and a
// lookupd run of each route in each configuration.
var runsPerRound = 2 * len(serveConfs) * len(routeNames)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "lookupd-loadtest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin := o.lookupd
	if bin == "" {
		if bin, err = buildLookupd(ctx, dir); err != nil {
			return err
		}
	}
	if o.accounting.On() {
		return accountingload.Run(ctx, o.accounting, o.model.rebuild, bin, dir, stdout, stderr)
	}
	tool, err := closedLoopTool(o, dir)
	if err != nil {
		return err
	}
	if o.soak.On() {
		return soak.Run(ctx, o.soak, o.tokens, o.openWorkers, bin, dir, stdout, stderr)
	}
	return runScale(ctx, o, tool, bin, dir, stdout, stderr)
}

// closedLoopTool returns wrk when asked for or, with --tool auto, when it
// is on PATH; else vegeta.
func closedLoopTool(o options, dir string) (loadtest.ClosedLoop, error) {
	if o.tool != "vegeta" {
		path, err := exec.LookPath("wrk")
		if err == nil {
			return loadtest.Wrk{Path: path, Threads: o.threads, Connections: o.connections, ScriptDir: dir}, nil
		}
		if o.tool == "wrk" {
			return nil, fmt.Errorf("--tool wrk: %w (apt-get install wrk)", err)
		}
	}
	return loadtest.Vegeta{Connections: o.connections}, nil
}

// buildLookupd builds cmd/lookupd into dir, in the service's own module
// (the load tool's module replaces it with the repository's root), so
// that lookupd is built with the service's go.mod, whether the tool runs
// from the repository's root or from cmd/loadtest.
func buildLookupd(ctx context.Context, dir string) (string, error) {
	const hint = "go build lookupd (run from the repository, or pass --lookupd)"
	list := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Dir}}", "github.com/lookup/persons")
	root, err := list.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w\n%s", err, exit.Stderr)
		}
		return "", fmt.Errorf("%s: the service's module: %w", hint, err)
	}
	bin := filepath.Join(dir, "lookupd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/lookupd") //nolint:gosec // G204: our temporary directory
	cmd.Dir = strings.TrimSpace(string(root))
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", hint, err, out)
	}
	return bin, nil
}

// tokenTTL returns a token lifetime that outlasts the whole run: the time
// the measurements take (wrk rounds up to whole seconds) plus an hour.
func tokenTTL(o options) time.Duration {
	n := time.Duration(runsPerRound)
	closed := time.Duration(o.rounds) * n * (o.warmup + o.duration + 2*time.Second)
	if o.loneDuration > 0 { // a lone run of lookupd a route and configuration
		closed += time.Duration(o.rounds) * (n / 2) * (o.warmup + o.loneDuration + 2*time.Second)
	}
	return closed + n*o.openDuration + time.Hour
}

// runMeasured runs s with tool for d, and measures the CPU time the
// serving process used a request: not for the bare server (this process)
// when the load generator runs in this process too (vegeta).
func runMeasured(ctx context.Context, tool loadtest.ClosedLoop, s loadtest.Scenario, d time.Duration) (loadtest.Result, error) {
	_, external := tool.(loadtest.Wrk)
	measure := s.PID != 0 || external
	var cpu0 time.Duration
	if measure {
		var err error
		if cpu0, err = loadtest.ProcessCPU(s.PID); err != nil {
			measure = false // no /proc: no CPU figure, the rest stands
		}
	}
	broker0, brokerErr := brokerCPU(s.BrokerPID)
	r, err := tool.Run(ctx, s, d)
	if err != nil {
		return r, err
	}
	r.Baseline = s.Baseline
	if cpu1, err := loadtest.ProcessCPU(s.PID); measure && err == nil && r.Requests > 0 {
		r.CPUPerRequest = time.Duration(float64(cpu1-cpu0) / float64(r.Requests))
	}
	if broker1, err := brokerCPU(s.BrokerPID); brokerErr == nil && err == nil && r.Requests > 0 {
		r.BrokerCPUPerRequest = time.Duration(float64(broker1-broker0) / float64(r.Requests))
	}
	return r, nil
}

// errNoBroker is brokerCPU's answer for a scenario without a NATS server
// of its own.
var errNoBroker = errors.New("no broker process")

// brokerCPU returns the CPU time the NATS server pid has used so far;
// errNoBroker for pid 0.
func brokerCPU(pid int) (time.Duration, error) {
	if pid == 0 {
		return 0, errNoBroker
	}
	return loadtest.ProcessCPU(pid)
}

// median returns the run of median req/s (the upper one of an even count).
func median(rs []loadtest.Result) loadtest.Result {
	s := append([]loadtest.Result(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Rate < s[j].Rate })
	return s[len(s)/2]
}
