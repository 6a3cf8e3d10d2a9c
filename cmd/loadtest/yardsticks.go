package main

import (
	"context"
	"io"

	"github.com/lookup/persons/internal/loadtest"
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

// startYardsticks starts the yardsticks over m's people: none yet.
//
// The PostgreSQL yardstick (a net/http + PostgreSQL server of package
// loadtest, over the same people) is added here: start it over m.pop (the
// same ids), and append
//
//	yardstick{name: "net/http + PostgreSQL", route: 0, url: pg.URL, close: pg.Close}
//
// The report then shows the row "lookupd / net/http + PostgreSQL" for GET
// person over HTTP.
func startYardsticks(_ context.Context, _ options, _ *model, _ *runEnv, _ io.Writer) ([]yardstick, error) {
	return nil, nil
}

// closeYardsticks stops every yardstick.
func closeYardsticks(ys []yardstick) {
	for _, y := range ys {
		if y.close != nil {
			_ = y.close()
		}
	}
}
