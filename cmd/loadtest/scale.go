package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// routeNames are the measured GETs, as the report names them.
var routeNames = []string{"GET person", "GET signers with expand"}

// route is one measured GET: its request URIs, the ids drawn, and the
// file wrk reads them from.
type route struct {
	name     string
	uris     []string
	pathFile string
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
	routes, err := drawRoutes(o, m, dir)
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
	writeScaleReport(stdout, o, tool, mach, m, res)
	return nil
}

// drawRoutes draws the ids of o.model's distribution over m's people and
// returns the routes, their request URIs written to files in dir for wrk.
func drawRoutes(o options, m *model, dir string) ([]route, error) {
	idx, err := loadtest.Draw(o.model.ids, o.model.draws, m.pop.People(), o.model.seed)
	if err != nil {
		return nil, err
	}
	routes := []route{
		{name: routeNames[0], uris: loadtest.URIs(m.pop, idx, loadtest.PersonURI), pathFile: filepath.Join(dir, "person.paths")},
		{name: routeNames[1], uris: loadtest.URIs(m.pop, idx, loadtest.SignersURI), pathFile: filepath.Join(dir, "signers.paths")},
	}
	for _, r := range routes {
		if err := loadtest.WritePaths(r.pathFile, r.uris); err != nil {
			return nil, fmt.Errorf("write the paths of %s: %w", r.name, err)
		}
	}
	return routes, nil
}
