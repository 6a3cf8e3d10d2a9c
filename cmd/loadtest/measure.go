package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// measurer runs the measurements of one run.
type measurer struct {
	o          options
	tool       loadtest.ClosedLoop
	env        *runEnv
	m          *model
	routes     []route
	tokens     []string
	bare       map[bool]string // base URL of the bare server, by TLS
	barePID    int             // its process
	yardsticks []yardstick
	prof       *profiler // nil: no profiles (--profile)
	progress   io.Writer
}

// pair is one route in one configuration: lookupd and the bare server over
// the same transport, measured one after the other.
type pair struct {
	conf                  serveConf
	route                 string
	lookupd, bare         []loadtest.Result // closed loop, a run a round
	openLookupd, openBare *loadtest.Result  // open loop, the last round
	lone                  []loadtest.Result // lookupd with one connection (--lone-duration), a run a round
	// rtt is the broker's round trip measured in the configuration (one
	// with the ledger) after its lone runs, a measurement a round.
	rtt []loadtest.BrokerRTT
}

// results is what a run measured.
type results struct {
	pairs      []*pair             // by configuration, then route
	yardsticks [][]loadtest.Result // closed loop, by yardstick, a run a round
	names      []yardstick
}

// measure runs o.rounds rounds; in each, every configuration of lookupd is
// started on the model, checked to answer the bytes of the bare server,
// and measured route by route, each run of lookupd right after a run of
// the bare server over the same transport; the last round adds the open
// loop. The yardsticks run at the end of each round.
func (ms *measurer) measure(ctx context.Context) (results, error) {
	res := results{yardsticks: make([][]loadtest.Result, len(ms.yardsticks)), names: ms.yardsticks}
	for _, c := range serveConfs {
		for _, r := range ms.routes {
			res.pairs = append(res.pairs, &pair{conf: c, route: r.name})
		}
	}
	for round := range ms.o.rounds {
		last := round == ms.o.rounds-1
		for ci, conf := range serveConfs {
			if err := ms.measureConf(ctx, conf, res.pairs[ci*len(ms.routes):(ci+1)*len(ms.routes)], round, last); err != nil {
				return res, err
			}
		}
		for yi, y := range ms.yardsticks {
			r, err := ms.closed(ctx, y.scenario(ms), round)
			if err != nil {
				return res, err
			}
			res.yardsticks[yi] = append(res.yardsticks[yi], r)
		}
	}
	return res, nil
}

// measureConf starts lookupd in conf, checks it, and measures its pairs
// (one a route).
func (ms *measurer) measureConf(ctx context.Context, conf serveConf, pairs []*pair, round int, open bool) (err error) {
	fmt.Fprintf(ms.progress, "round %d: lookupd serve, %s ...\n", round+1, conf.name)
	srv, err := ms.env.startServe(ctx, ms.m, conf, ms.progress)
	if err != nil {
		return err
	}
	defer func() {
		serr := srv.Stop()
		switch {
		case err != nil:
			err = fmt.Errorf("%w\nlookupd serve (%s) stopped: %s; its log ends:\n%s", err, conf.name, loadtest.ErrText(serr), srv.Logs())
		case serr != nil:
			err = fmt.Errorf("lookupd serve (%s): %w; its log ends:\n%s", conf.name, serr, srv.Logs())
		}
	}()
	if err := ms.check(srv.API, conf.tls); err != nil {
		return fmt.Errorf("lookupd serve (%s): %w", conf.name, err)
	}
	for ri, rt := range ms.routes {
		if err := ms.measureRoute(ctx, rt, conf, srv, pairs[ri], round, open); err != nil {
			return err
		}
	}
	if conf.audit == "" && ms.o.loneDuration > 0 {
		return ms.brokerRTT(ctx, pairs, round)
	}
	return nil
}

// measureRoute measures p, route rt of lookupd srv in conf: the bare
// server then lookupd in the closed loop, lookupd with one connection,
// and, when open, both in the open loop.
func (ms *measurer) measureRoute(ctx context.Context, rt route, conf serveConf, srv *loadtest.Dev, p *pair, round int, open bool) error {
	bare, look := ms.scenarios(rt, conf, srv)
	rb, err := ms.closed(ctx, bare, round)
	if err != nil {
		return err
	}
	rl, err := ms.closedProfiled(ctx, look, round, srv.Admin)
	if err != nil {
		return err
	}
	p.bare, p.lookupd = append(p.bare, rb), append(p.lookupd, rl)
	if ms.o.loneDuration > 0 {
		r1, err := ms.lone(ctx, look, round, srv.Admin)
		if err != nil {
			return err
		}
		p.lone = append(p.lone, r1)
	}
	if open && ms.o.rate > 0 {
		if p.openBare, err = ms.open(ctx, bare); err != nil {
			return err
		}
		if p.openLookupd, err = ms.open(ctx, look); err != nil {
			return err
		}
	}
	return nil
}

// check compares the answers of lookupd at api with the bare server's, for
// the first drawn ids of every route.
func (ms *measurer) check(api string, tls bool) error {
	c := ms.env.client(tls)
	for _, rt := range ms.routes {
		for _, uri := range rt.uris[:min(sampleChecks, len(rt.uris))] {
			if err := loadtest.SameBody(c, ms.bare[tls], api, uri, ms.tokens[0]); err != nil {
				return fmt.Errorf("the bare server and lookupd disagree on %s: %w", rt.name, err)
			}
		}
	}
	return nil
}

// scenarios returns the bare server's and lookupd's scenario of rt in
// conf.
func (ms *measurer) scenarios(rt route, conf serveConf, srv *loadtest.Dev) (bare, look loadtest.Scenario) {
	base := loadtest.Scenario{Paths: rt.uris, PathFile: rt.pathFile, Tokens: ms.tokens}
	if conf.tls {
		base.TLS = ms.env.cert.ClientTLS()
	}
	bare, look = base, base
	bare.Name, bare.URL, bare.PID = fmt.Sprintf("bare net/http, %s, %s", rt.name, transport(conf.tls)), ms.bare[conf.tls], ms.barePID
	look.Name, look.URL, look.PID, look.Baseline = fmt.Sprintf("lookupd %s, %s", rt.name, conf.name), srv.API, srv.PID(), bare.Name
	look.BrokerPID = ms.m.broker.PID()
	return bare, look
}

// closed runs s in the closed loop, after the warm-up.
func (ms *measurer) closed(ctx context.Context, s loadtest.Scenario, round int) (loadtest.Result, error) {
	return ms.closedProfiled(ctx, s, round, "")
}

// closedProfiled is closed for lookupd, whose admin listener is admin
// ("": not lookupd): its ledger's counts read around the measured run,
// and profiled during it when --profile asks for it.
func (ms *measurer) closedProfiled(ctx context.Context, s loadtest.Scenario, round int, admin string) (loadtest.Result, error) {
	return ms.closedWith(ctx, ms.tool, s, ms.o.duration, round, admin, ms.prof)
}

// closedWith runs s with tool for d after the warm-up; see closedProfiled
// for admin; prof nil profiles nothing.
func (ms *measurer) closedWith(ctx context.Context, tool loadtest.ClosedLoop, s loadtest.Scenario, d time.Duration, round int, admin string, prof *profiler) (loadtest.Result, error) {
	if ms.o.warmup > 0 {
		if _, err := tool.Run(ctx, s, ms.o.warmup); err != nil {
			return loadtest.Result{}, err
		}
	}
	before := ms.ledgerCounts(admin, s.Name)
	var r loadtest.Result
	err := prof.during(ctx, admin, fmt.Sprintf("round %d %s", round+1, s.Name), d, ms.progress, func() (err error) {
		r, err = runMeasured(ctx, tool, s, d)
		return err
	})
	if err != nil {
		return r, err
	}
	if after := ms.ledgerCounts(admin, s.Name); before != nil && after != nil {
		c := after.Since(*before)
		r.Ledger = &c
	}
	fmt.Fprintf(ms.progress, "round %d: %s: %.0f req/s, p50 %v, p99 %v, %d errors%s\n", round+1, s.Name, r.Rate, r.P50, r.P99, r.Errors, ledgerProgress(r))
	return r, nil
}

// open runs s in the open loop at o.rate.
func (ms *measurer) open(ctx context.Context, s loadtest.Scenario) (*loadtest.Result, error) {
	r, err := loadtest.OpenLoop(ctx, s, ms.o.rate, ms.o.openDuration, ms.o.openWorkers)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(ms.progress, "open loop: %s: %.0f req/s, p50 %v, p99 %v, %d errors\n", s.Name, r.Rate, r.P50, r.P99, r.Errors)
	return &r, nil
}

// transport names the transport of a configuration.
func transport(tls bool) string {
	if tls {
		return "HTTPS"
	}
	return "HTTP"
}
