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
// LOADTEST_TOKENS) in rotation, and prints a summary line for parseWrk.
// Without LOADTEST_PATHS every request goes to the URL's path, each
// request formatted once up front. With it, the requests go to the paths
// of that file (one a line, written by WritePaths) in turn, from a random
// one on: thread t of LOADTEST_THREADS takes lines t, t+threads, ...
// (LOADTEST_THREADS must be wrk's -t), and each request is the
// path between the two halves of its token's request, formatted once up
// front. The tokens come through the environment so that they are never
// in a file or on a command line.
const wrkScript = `
local reqs = {}
local paths = {}
local pre, suf = {}, {}
local i, j = 0, 0
local threads = 0

function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end

function init(args)
  local n = tonumber(os.getenv("LOADTEST_TOKENS") or "0")
  local hs = {}
  for k = 1, n do
    hs[k] = {["Authorization"] = "Bearer " .. os.getenv("LOADTEST_TOKEN_" .. k)}
  end
  if n == 0 then
    hs[1] = {}
  end
  local file = os.getenv("LOADTEST_PATHS")
  if file then
    local nt = tonumber(os.getenv("LOADTEST_THREADS") or "1")
    local me = tid or 0
    local line = 0
    for p in io.lines(file) do
      if line % nt == me then
        paths[#paths + 1] = p
      end
      line = line + 1
    end
    for k, h in ipairs(hs) do
      local r = wrk.format(nil, "/@PATH@", h)
      local s, e = string.find(r, "/@PATH@", 1, true)
      pre[k] = string.sub(r, 1, s - 1)
      suf[k] = string.sub(r, e + 1)
    end
  else
    for k, h in ipairs(hs) do
      reqs[k] = wrk.format(nil, nil, h)
    end
  end
  math.randomseed(os.time() * 64 + (tid or 0))
  j = math.random(#hs) - 1
  if #paths > 0 then
    i = math.random(#paths) - 1
  end
end

function request()
  if #paths > 0 then
    i = i % #paths + 1
    j = j % #pre + 1
    return pre[j] .. paths[i] .. suf[j]
  end
  j = j % #reqs + 1
  return reqs[j]
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

// Lone is wrk -t1 -c1.
func (w Wrk) Lone() ClosedLoop {
	w.Threads, w.Connections = 1, 1
	return w
}

// Run runs wrk against s for d, rounded up to whole seconds.
func (w Wrk) Run(ctx context.Context, s Scenario, d time.Duration) (Result, error) {
	script := filepath.Join(w.ScriptDir, "loadtest.lua")
	if err := os.WriteFile(script, []byte(wrkScript), 0o600); err != nil {
		return Result{}, err
	}
	secs := int(math.Ceil(d.Seconds()))
	cmd := exec.CommandContext(ctx, w.Path, //nolint:gosec // G204: wrk found on PATH, our own script and URL
		"-t"+strconv.Itoa(w.Threads), "-c"+strconv.Itoa(w.Connections),
		"-d"+strconv.Itoa(max(secs, 1))+"s", "--timeout", "5s", "-s", script, wrkURL(s))
	cmd.Env = append(os.Environ(), tokenEnv(s.Tokens)...)
	if s.PathFile != "" {
		cmd.Env = append(cmd.Env, "LOADTEST_PATHS="+s.PathFile, "LOADTEST_THREADS="+strconv.Itoa(w.Threads))
	}
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

// wrkURL is the URL wrk is given: s.URL, with a path when s.PathFile
// names the paths (the script sends those instead).
func wrkURL(s Scenario) string {
	if s.PathFile != "" && !strings.HasSuffix(s.URL, "/") {
		return s.URL + "/"
	}
	return s.URL
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
