package loadtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Vegeta runs the closed-loop scenarios with vegeta's library when wrk is
// not installed: Connections workers, each sending its next request as
// soon as its last is answered.
type Vegeta struct {
	Connections int
}

// Name says how a result was measured.
func (v Vegeta) Name() string { return fmt.Sprintf("vegeta, %d workers", v.Connections) }

// Lone is vegeta with one worker.
func (v Vegeta) Lone() ClosedLoop { return Vegeta{Connections: 1} }

// Run attacks s for d as fast as v.Connections workers go.
func (v Vegeta) Run(ctx context.Context, s Scenario, d time.Duration) (Result, error) {
	c := uint64(max(v.Connections, 1)) //nolint:gosec // G115: positive
	atk := vegeta.NewAttacker(append(clientOptions(s), vegeta.Workers(c), vegeta.MaxWorkers(c), vegeta.Connections(v.Connections))...)
	r, m := attack(ctx, atk, s.Name, targeter(s), vegeta.Rate{}, d)
	if m.Requests == 0 {
		return Result{}, fmt.Errorf("vegeta: no request completed against %s", s.Name)
	}
	r.Rate = float64(m.Requests) / (m.Duration + m.Wait).Seconds()
	r.Tool = v.Name()
	return r, nil
}

// OpenLoop sends s at a fixed rate (requests a second) for d, whatever the
// latency: vegeta adds workers (each with its connection) as needed, up to
// maxWorkers; past that the rate achieved falls short. It returns the rate
// achieved and the latency of the successful requests.
func OpenLoop(ctx context.Context, s Scenario, rate int, d time.Duration, maxWorkers int) (Result, error) {
	return openLoop(ctx, s.Name, targeter(s), rate, d, maxWorkers, clientOptions(s))
}

// OpenLoopTargets is OpenLoop with the requests made by tr (called from
// many goroutines at once), under the scenario name name.
func OpenLoopTargets(ctx context.Context, name string, tr vegeta.Targeter, rate int, d time.Duration, maxWorkers int) (Result, error) {
	return openLoop(ctx, name, tr, rate, d, maxWorkers, clientOptions(Scenario{}))
}

// clientOptions are the attacker's options for s: keep-alive, HTTP/1.1
// (as wrk and as lookupd's HTTPS listener offers), s.TLS, no body kept.
func clientOptions(s Scenario) []func(*vegeta.Attacker) {
	opts := []func(*vegeta.Attacker){vegeta.MaxBody(0), vegeta.Timeout(5 * time.Second), vegeta.HTTP2(false)}
	if s.TLS != nil {
		opts = append(opts, vegeta.TLSConfig(s.TLS))
	}
	return opts
}

func openLoop(ctx context.Context, name string, tr vegeta.Targeter, rate int, d time.Duration, maxWorkers int, opts []func(*vegeta.Attacker)) (Result, error) {
	atk := vegeta.NewAttacker(append(opts, vegeta.MaxWorkers(uint64(max(maxWorkers, 1))))...) //nolint:gosec // G115: positive
	r, m := attack(ctx, atk, name, tr, vegeta.Rate{Freq: rate, Per: time.Second}, d)
	if m.Requests == 0 {
		return Result{}, fmt.Errorf("vegeta: no request completed against %s", name)
	}
	r.Rate = m.Rate
	r.Tool = "vegeta, " + Thousands(float64(rate)) + " req/s"
	return r, nil
}

// attack runs atk with the requests of tr (scenario name) at pace p for d (or until ctx ends) and
// returns the result (without Rate and Tool) and vegeta's metrics of all
// requests. The latencies are those of the successful requests only: a
// refused connection is quick, and is counted as an error instead.
func attack(ctx context.Context, atk *vegeta.Attacker, name string, tr vegeta.Targeter, p vegeta.Pacer, d time.Duration) (Result, *vegeta.Metrics) {
	stop := context.AfterFunc(ctx, func() { atk.Stop() })
	defer stop()
	var all, ok vegeta.Metrics
	var (
		errs  uint64
		kinds map[string]uint64
	)
	for res := range atk.Attack(tr, p, d, "") {
		all.Add(res)
		if res.Error != "" || res.Code < 200 || res.Code >= 300 {
			errs++
			if kinds == nil {
				kinds = map[string]uint64{}
			}
			kinds[errorKind(res)]++
			continue
		}
		ok.Add(res)
	}
	all.Close()
	ok.Close()
	return Result{Scenario: name, Requests: all.Requests, P50: ok.Latencies.P50, P99: ok.Latencies.P99, Errors: errs, ErrorKinds: kinds}, &all
}

// errorKind names the kind of a failed request: its status when it had an
// answer, else the last clause of its transport error (which leaves out
// the URL and its id).
func errorKind(res *vegeta.Result) string {
	if res.Code != 0 || res.Error == "" {
		return "HTTP " + strconv.Itoa(int(res.Code))
	}
	if i := strings.LastIndex(res.Error, ": "); i >= 0 {
		return res.Error[i+2:]
	}
	return res.Error
}

// targeter returns GET s.URL (or s.URL+s.Paths[k] in turn) with s.Tokens
// in rotation.
func targeter(s Scenario) vegeta.Targeter {
	headers := make([]http.Header, len(s.Tokens))
	for i, t := range s.Tokens {
		headers[i] = http.Header{"Authorization": {"Bearer " + t}}
	}
	urls := []string{s.URL}
	if len(s.Paths) > 0 {
		urls = make([]string, len(s.Paths))
		for i, p := range s.Paths {
			urls[i] = s.URL + p
		}
	}
	var n atomic.Uint64
	n.Store(rand.Uint64N(uint64(len(urls)))) //nolint:gosec // G404: where to start in the paths
	return func(t *vegeta.Target) error {
		k := n.Add(1) - 1
		t.Method, t.URL, t.Header = http.MethodGet, urls[k%uint64(len(urls))], nil
		if len(headers) > 0 {
			t.Header = headers[k%uint64(len(headers))]
		}
		return nil
	}
}
