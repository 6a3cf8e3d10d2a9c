package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lookup/persons/internal/loadtest"
)

// scopes are the scopes of the minted tokens: expand needs the second.
const scopes = "read:persons read:persons:ssn"

// scenarioCount is how many scenarios prepare returns.
const scenarioCount = 5

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
	tool, err := closedLoopTool(o, dir)
	if err != nil {
		return err
	}
	bin := o.lookupd
	if bin == "" {
		if bin, err = buildLookupd(ctx, dir); err != nil {
			return err
		}
	}
	if o.soak.duration > 0 {
		return runSoak(ctx, o, bin, dir, stdout, stderr)
	}
	m := readMachine(ctx, bin)
	fmt.Fprintln(stderr, "starting lookupd dev ...")
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	// The read path is measured without the audit ledger; a second dev
	// server with LOOKUP_AUDIT=required measures what the ledger costs.
	dev, err := loadtest.StartDev(sctx, bin, filepath.Join(dir, "dev"), "--audit", "off")
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		if serr := dev.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("lookupd dev: %w; its log ends:\n%s", serr, dev.Logs())
		}
	}()
	bare, scenarios, err := prepare(ctx, o, bin, dev, stderr)
	if err != nil {
		return err
	}
	defer bare.Close()
	audited, err := startAudited(ctx, o, bin, filepath.Join(dir, "audited"), stderr)
	if err != nil {
		return err
	}
	defer func() { _ = audited.dev.Stop() }()
	scenarios = append(scenarios, audited.scenario)
	closed, err := measureClosed(ctx, o, tool, scenarios, stderr)
	if err != nil {
		return err
	}
	open, err := measureOpen(ctx, o, scenarios, stderr)
	if err != nil {
		return err
	}
	writeReport(stdout, o, tool, m, closed, open)
	return nil
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

// buildLookupd builds cmd/lookupd into dir.
func buildLookupd(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "lookupd")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/lookup/persons/cmd/lookupd") //nolint:gosec // G204: our temporary directory
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build lookupd (run from the repository, or pass --lookupd): %w\n%s", err, out)
	}
	return bin, nil
}

// prepare mints the tokens, publishes the fixture, waits for it to be
// projected, starts the bare server with lookupd's answers and checks that
// both answer the same bytes. It returns the bare server and the
// scenarios, the bare one first.
func prepare(ctx context.Context, o options, bin string, dev *loadtest.Dev, progress io.Writer) (*loadtest.Bare, []loadtest.Scenario, error) {
	toks, err := loadtest.MintTokens(ctx, bin, dev.KeyPath, scopes, tokenTTL(o), o.tokens+1)
	if err != nil {
		return nil, nil, err
	}
	one, many := toks[:1], toks[1:]
	fx := loadtest.NewFixture()
	if err := fx.Publish(ctx, dev.NATS); err != nil {
		return nil, nil, err
	}
	c := &http.Client{Timeout: 5 * time.Second}
	if err := fx.WaitProjected(c, dev.API, one[0], time.Minute); err != nil {
		return nil, nil, fmt.Errorf("fixture not projected: %w", err)
	}
	for i, tok := range many {
		if _, err := loadtest.Get(c, dev.API+fx.PersonPath(), tok); err != nil {
			return nil, nil, fmt.Errorf("token %d of %d: %w", i+1, len(many), err)
		}
	}
	routes := map[string]loadtest.Response{}
	for _, uri := range []string{fx.PersonPath(), fx.SignersPath()} {
		if routes[uri], err = loadtest.Get(c, dev.API+uri, one[0]); err != nil {
			return nil, nil, err
		}
	}
	bare, err := loadtest.StartBare(routes)
	if err != nil {
		return nil, nil, err
	}
	for uri := range routes {
		if err := loadtest.SameBody(c, bare.URL, dev.API, uri, one[0]); err != nil {
			_ = bare.Close()
			return nil, nil, fmt.Errorf("bare server and lookupd disagree on %s: %w", strings.SplitN(uri, "?", 2)[0], err)
		}
	}
	fmt.Fprintf(progress, "fixture projected, %d tokens accepted, bare server answers the same bytes\n", len(toks))
	return bare, []loadtest.Scenario{
		{Name: BarePerson, URL: bare.URL + fx.PersonPath(), Tokens: one},
		{Name: "lookupd GET person, one token", URL: dev.API + fx.PersonPath(), Tokens: one, Baseline: BarePerson, PID: dev.PID()},
		{Name: fmt.Sprintf("lookupd GET person, %s tokens in rotation", loadtest.Thousands(float64(len(many)))), URL: dev.API + fx.PersonPath(), Tokens: many, Baseline: BarePerson, PID: dev.PID()},
		{Name: BareSigners, URL: bare.URL + fx.SignersPath(), Tokens: one},
		{Name: fmt.Sprintf("lookupd GET signers (%d) with expand, one token", loadtest.Signers), URL: dev.API + fx.SignersPath(), Tokens: one, Baseline: BareSigners, PID: dev.PID()},
	}, nil
}

// auditedDev is a second "lookupd dev", with LOOKUP_AUDIT=required, and
// its protected-data scenario.
type auditedDev struct {
	dev      *loadtest.Dev
	scenario loadtest.Scenario
}

// startAudited starts lookupd dev with the audit ledger required, gives it
// the fixture and a token, and returns it with the scenario "GET signers
// with expand" against it.
func startAudited(ctx context.Context, o options, bin, dataDir string, progress io.Writer) (auditedDev, error) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	dev, err := loadtest.StartDev(sctx, bin, dataDir, "--audit", "required")
	if err != nil {
		return auditedDev{}, err
	}
	a := auditedDev{dev: dev}
	toks, err := loadtest.MintTokens(ctx, bin, dev.KeyPath, scopes, tokenTTL(o), 1)
	if err == nil {
		fx := loadtest.NewFixture()
		if err = fx.Publish(ctx, dev.NATS); err == nil {
			err = fx.WaitProjected(&http.Client{Timeout: 5 * time.Second}, dev.API, toks[0], time.Minute)
		}
		a.scenario = loadtest.Scenario{Name: AuditedScenario, URL: dev.API + fx.SignersPath(), Tokens: toks, Baseline: BareSigners, PID: dev.PID()}
	}
	if err != nil {
		_ = dev.Stop()
		return auditedDev{}, fmt.Errorf("audited lookupd dev: %w", err)
	}
	fmt.Fprintln(progress, "audited lookupd dev ready (LOOKUP_AUDIT=required)")
	return a, nil
}

// The baselines: the bare server answering the bytes lookupd answers, to
// the same requests (path, query and Authorization header).
const (
	BarePerson  = "bare net/http, same bytes (GET person)"
	BareSigners = "bare net/http, same bytes (GET signers with expand)"
)

// AuditedScenario names the scenario of the dev server with the audit
// ledger required; the report sets it against the same GET without it.
var AuditedScenario = fmt.Sprintf("lookupd GET signers (%d) with expand, one token, LOOKUP_AUDIT=required", loadtest.Signers)

// tokenTTL returns a token lifetime that outlasts the whole run: the time
// the measurements take (wrk rounds up to whole seconds) plus an hour.
func tokenTTL(o options) time.Duration {
	closed := time.Duration(o.rounds) * scenarioCount * (o.warmup + o.duration + 2*time.Second)
	return closed + scenarioCount*o.openDuration + time.Hour
}

// measureClosed runs every scenario o.rounds times, interleaved, each run
// after a warm-up, and returns the median run of each by req/s.
func measureClosed(ctx context.Context, o options, tool loadtest.ClosedLoop, scenarios []loadtest.Scenario, progress io.Writer) ([]loadtest.Result, error) {
	runs := make([][]loadtest.Result, len(scenarios))
	for round := range o.rounds {
		for i, s := range scenarios {
			if o.warmup > 0 {
				if _, err := tool.Run(ctx, s, o.warmup); err != nil {
					return nil, err
				}
			}
			r, err := runMeasured(ctx, tool, s, o.duration)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(progress, "round %d: %s: %.0f req/s, p99 %v, %d errors\n", round+1, s.Name, r.Rate, r.P99, r.Errors)
			runs[i] = append(runs[i], r)
		}
	}
	out := make([]loadtest.Result, len(runs))
	for i, rs := range runs {
		out[i] = median(rs)
	}
	return out, nil
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
	r, err := tool.Run(ctx, s, d)
	if err != nil {
		return r, err
	}
	r.Baseline = s.Baseline
	if cpu1, err := loadtest.ProcessCPU(s.PID); measure && err == nil && r.Requests > 0 {
		r.CPUPerRequest = time.Duration(float64(cpu1-cpu0) / float64(r.Requests))
	}
	return r, nil
}

// measureOpen runs every scenario once at the fixed rate o.rate (none
// when it is 0).
func measureOpen(ctx context.Context, o options, scenarios []loadtest.Scenario, progress io.Writer) ([]loadtest.Result, error) {
	if o.rate == 0 {
		return nil, nil
	}
	var out []loadtest.Result
	for _, s := range scenarios {
		r, err := loadtest.OpenLoop(ctx, s, o.rate, o.openDuration, o.openWorkers)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "open loop: %s: %.0f req/s, p50 %v, p99 %v, %d errors\n", s.Name, r.Rate, r.P50, r.P99, r.Errors)
		out = append(out, r)
	}
	return out, nil
}

// median returns the run of median req/s (the upper one of an even count).
func median(rs []loadtest.Result) loadtest.Result {
	s := append([]loadtest.Result(nil), rs...)
	sort.Slice(s, func(i, j int) bool { return s[i].Rate < s[j].Rate })
	return s[len(s)/2]
}
