package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// wrkScript sends GET with the tokens of LOADTEST_TOKEN_1..n (n in
// LOADTEST_TOKENS) in rotation, each request formatted once up front, and
// prints a summary line for parseWrk. The tokens come through the
// environment so that they are never in a file or on a command line.
const wrkScript = `
local reqs = {}
local i = 0

function init(args)
  local n = tonumber(os.getenv("LOADTEST_TOKENS") or "0")
  for k = 1, n do
    reqs[k] = wrk.format(nil, nil, {["Authorization"] = "Bearer " .. os.getenv("LOADTEST_TOKEN_" .. k)})
  end
  if n == 0 then
    reqs[1] = wrk.format()
  end
  i = math.random(#reqs) - 1
end

function request()
  i = i % #reqs + 1
  return reqs[i]
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('LOADTEST {"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99)))
end
`

// Wrk runs the closed-loop scenarios with wrk (https://github.com/wg/wrk).
type Wrk struct {
	Path        string // the wrk binary
	Threads     int
	Connections int
	ScriptDir   string // where the Lua script (no secrets) is written
}

// Name says how a result was measured.
func (w Wrk) Name() string { return fmt.Sprintf("wrk -t%d -c%d", w.Threads, w.Connections) }

// Run runs wrk against s for d, rounded up to whole seconds.
func (w Wrk) Run(ctx context.Context, s Scenario, d time.Duration) (Result, error) {
	script := filepath.Join(w.ScriptDir, "loadtest.lua")
	if err := os.WriteFile(script, []byte(wrkScript), 0o600); err != nil {
		return Result{}, err
	}
	secs := int(math.Ceil(d.Seconds()))
	cmd := exec.CommandContext(ctx, w.Path, //nolint:gosec // G204: wrk found on PATH, our own script and URL
		"-t"+strconv.Itoa(w.Threads), "-c"+strconv.Itoa(w.Connections),
		"-d"+strconv.Itoa(max(secs, 1))+"s", "--timeout", "5s", "-s", script, s.URL)
	cmd.Env = append(os.Environ(), tokenEnv(s.Tokens)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Result{}, fmt.Errorf("wrk: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	r, err := parseWrk(out)
	if err != nil {
		return Result{}, err
	}
	r.Scenario, r.Tool = s.Name, w.Name()
	return r, nil
}

// tokenEnv returns the variables wrkScript reads the tokens from.
func tokenEnv(tokens []string) []string {
	env := make([]string, 0, len(tokens)+1)
	env = append(env, "LOADTEST_TOKENS="+strconv.Itoa(len(tokens)))
	for i, t := range tokens {
		env = append(env, "LOADTEST_TOKEN_"+strconv.Itoa(i+1)+"="+t)
	}
	return env
}

// parseWrk reads the summary line wrkScript prints.
func parseWrk(out []byte) (Result, error) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "LOADTEST ")
		if !ok {
			continue
		}
		var s struct {
			Requests   uint64 `json:"requests"`
			DurationUS int64  `json:"duration_us"`
			Errors     uint64 `json:"errors"`
			P50US      int64  `json:"p50_us"`
			P99US      int64  `json:"p99_us"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil {
			return Result{}, fmt.Errorf("wrk summary %q: %w", line, err)
		}
		if s.DurationUS <= 0 {
			return Result{}, fmt.Errorf("wrk summary %q: no duration", line)
		}
		return Result{
			Requests: s.Requests,
			Rate:     float64(s.Requests) / (float64(s.DurationUS) / 1e6),
			P50:      time.Duration(s.P50US) * time.Microsecond,
			P99:      time.Duration(s.P99US) * time.Microsecond,
			Errors:   s.Errors,
		}, nil
	}
	return Result{}, fmt.Errorf("wrk printed no summary line:\n%s", out)
}
