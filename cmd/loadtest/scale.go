package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// The measured GETs, as the report names them: GET person, and GET
// signers with expand of a person with one signer and of one with five
// (one and five persons disclosed an answer).
const (
	routePerson  = "GET person"
	routeSigners = "GET signers with expand"
	routeFive    = "GET signers with expand, five signers"
)

// routeNames are the measured GETs in the order they are measured.
var routeNames = []string{routePerson, routeSigners, routeFive}

// route is one measured GET: its request URIs, the ids drawn, and the
// file wrk reads them from.
type route struct {
	name     string
	uris     []string
	pathFile string
}

// routeDraw is where a route's ids are drawn from: every person, or the
// people with signers signers.
type routeDraw struct {
	name    string
	all     bool // every person; else those with signers signers
	signers int
	uri     func(id string) string
	file    string
}

// routeDraws are the routes' draws, one a route of routeNames.
var routeDraws = []routeDraw{
	{name: routePerson, all: true, uri: loadtest.PersonURI, file: "person.paths"},
	{name: routeSigners, signers: 1, uri: loadtest.SignersURI, file: "signers.paths"},
	{name: routeFive, signers: fixtures.FiveSigners, uri: loadtest.SignersURI, file: "signers-five.paths"},
}

// runScale is the load test: the model opened (built the first time), the
// ids drawn, the bare server started on the captured answers (a child
// process serving HTTP and HTTPS), every
// configuration of lookupd measured against them, and the report.
func runScale(ctx context.Context, o options, tool loadtest.ClosedLoop, bin, dir string, stdout, stderr io.Writer) error {
	mach := loadtest.ReadMachine(ctx, bin)
	env, err := newRunEnv(ctx, bin, dir)
	if err != nil {
		return err
	}
	m, err := openModel(ctx, o, env, stderr)
	if err != nil {
		return err
	}
	defer m.close()
	routes, err := drawRoutes(o, m, dir, stderr)
	if err != nil {
		return err
	}
	toks, err := loadtest.MintTokens(ctx, bin, env.keyPath, loadtest.Scopes, tokenTTL(o), o.tokens)
	if err != nil {
		return err
	}
	bare, err := startBare(ctx, o, env)
	if err != nil {
		return err
	}
	defer func() { _ = bare.Stop() }()
	ys, err := startYardsticks(ctx, m, stderr)
	if err != nil {
		return err
	}
	defer closeYardsticks(ys)
	ms := &measurer{o: o, tool: tool, env: env, m: m, routes: routes, tokens: toks,
		bare: bare.url, barePID: bare.PID(), yardsticks: ys, progress: stderr}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o750); err != nil {
			return err
		}
		ms.prof = &profiler{dir: o.profile}
		env.serveExtra = ms.prof.serveFlags()
	}
	res, err := ms.measure(ctx)
	if err != nil {
		return err
	}
	proj, err := measureProjection(ctx, bin, dir, m, o.projection, stderr)
	if err != nil {
		return err
	}
	writeScaleReport(stdout, o, tool, mach, m, res)
	writeProjection(stdout, proj)
	return nil
}

// drawRoutes draws, route by route, the ids of o.model's distribution over
// the people the route reads (every person for GET person, those with one
// or five signers for GET signers) and returns the routes, their request
// URIs written to files in dir for wrk. A route no person fits (a model
// without signers) is left out, which it says on progress.
func drawRoutes(o options, m *model, dir string, progress io.Writer) ([]route, error) {
	var routes []route
	for _, d := range routeDraws {
		var among []int // nil: every person
		if !d.all {
			if among = m.pop.ConsumersWith(d.signers); len(among) == 0 {
				fmt.Fprintf(progress, "no %s: no person has %d signers\n", d.name, d.signers)
				continue
			}
		}
		idx, err := drawAmong(o.model, among)
		if err != nil {
			return nil, err
		}
		r := route{name: d.name, uris: loadtest.URIs(m.pop, idx, d.uri), pathFile: filepath.Join(dir, d.file)}
		if err := loadtest.WritePaths(r.pathFile, r.uris); err != nil {
			return nil, fmt.Errorf("write the paths of %s: %w", r.name, err)
		}
		routes = append(routes, r)
	}
	return routes, nil
}

// drawAmong draws mo.draws ids of mo's distribution among people (nil:
// every person of the model), returning their indexes in the population.
func drawAmong(mo modelOptions, people []int) ([]int, error) {
	n := mo.people
	if people != nil {
		n = len(people)
	}
	idx, err := loadtest.Draw(mo.ids, mo.draws, n, mo.seed)
	if err != nil || people == nil {
		return idx, err
	}
	for i, k := range idx {
		idx[i] = people[k]
	}
	return idx, nil
}
