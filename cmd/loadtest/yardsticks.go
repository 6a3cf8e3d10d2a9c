package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
	"github.com/lookup/persons/cmd/loadtest/internal/pgyardstick"
)

// yardstick is a server a user might build instead of lookupd, serving
// the same people: measured in the same rounds, with the same ids and
// tokens, and set in the report against lookupd in its default
// configuration over the same transport and route ("lookupd / name").
type yardstick struct {
	name  string // what it is, e.g. "net/http + PostgreSQL"
	route int    // index in routeNames of the route it answers
	tls   bool   // whether url is HTTPS
	url   string // base URL: requests go to url + the route's URIs
	pid   int    // the serving process, for CPU a request (0: not measured)
	close func() error
}

// scenario returns y's closed-loop scenario: the URIs of its route.
func (y yardstick) scenario(ms *measurer) loadtest.Scenario {
	rt := ms.routes[y.route]
	s := loadtest.Scenario{Name: y.name + ", " + rt.name + ", " + transport(y.tls), URL: y.url,
		Paths: rt.uris, PathFile: rt.pathFile, Tokens: ms.tokens, PID: y.pid}
	if y.tls {
		s.TLS = ms.env.cert.ClientTLS()
	}
	return s
}

// startYardsticks starts the yardsticks over m's people: net/http +
// PostgreSQL answering GET person with the bytes captured for each person
// (a cluster in pgyardstick.DefaultPostgresDir, loaded once and reused). It
// is left out, with a note, where PostgreSQL is not installed. Its HTTP
// server runs in this process, so its CPU a request is not measured.
func startYardsticks(ctx context.Context, m *model, progress io.Writer) ([]yardstick, error) {
	bodies, err := loadtest.ReadBodies(m.dir)
	if err != nil {
		return nil, err
	}
	rows := func(yield func(string, []byte) bool) {
		for i := range m.pop.People() {
			if !yield(m.pop.ConsumerID(i), bodies.Body(2*i)) {
				return
			}
		}
	}
	fmt.Fprintln(progress, "starting the net/http + PostgreSQL yardstick ...")
	pg, err := pgyardstick.StartPostgres(ctx, pgyardstick.DefaultPostgresDir(), rows)
	if errors.Is(err, pgyardstick.ErrNoPostgres) {
		fmt.Fprintf(progress, "no PostgreSQL yardstick: %v\n", err)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("PostgreSQL yardstick: %w", err)
	}
	fmt.Fprintf(progress, "PostgreSQL yardstick ready (loaded %v, %v)\n", pg.Loaded, pg.Load.Round(time.Millisecond))
	return []yardstick{{name: "net/http + PostgreSQL", route: 0, url: pg.URL, close: pg.Close}}, nil
}

// closeYardsticks stops every yardstick.
func closeYardsticks(ys []yardstick) {
	for _, y := range ys {
		if y.close != nil {
			_ = y.close()
		}
	}
}
