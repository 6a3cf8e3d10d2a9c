package loadtest

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// signersQuery is what follows the consumer id in SignersURI.
const signersQuery = "&expand=PROTECTED_PERSONAL_DATA"

// ModelHandler answers the requests of a model as lookupd did when the
// model was built: GET PersonURI(id) with body record 2i and GET
// SignersURI(id) with record 2i+1 of person i, each with its route's
// captured headers (Date and Content-Length are the server's own, as in
// lookupd), and 404 for anything else. Finding the answer is a map
// lookup: the bare server is the ceiling a server answering the same
// bytes could reach.
func ModelHandler(p *fixtures.Population, bodies *Bodies, personHeader, signersHeader http.Header) http.Handler {
	index := make(map[uuid.UUID]int32, p.People())
	for i := range p.People() {
		index[p.ConsumerUUID(i)] = int32(i) //nolint:gosec // G115: fewer people than 2^31
	}
	personH, signersH := answerHeader(personHeader), answerHeader(signersHeader)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, h := -1, personH
		if id, ok := strings.CutPrefix(r.URL.Path, "/api/v1/persons/"); ok && r.URL.RawQuery == "" {
			if i, ok := lookup(index, id); ok {
				rec = 2 * i
			}
		} else if q, ok := strings.CutPrefix(r.URL.RawQuery, "consumer_id="); ok && r.URL.Path == "/api/v1/authorized-signers" {
			if id, ok := strings.CutSuffix(q, signersQuery); ok {
				if i, ok := lookup(index, id); ok {
					rec, h = 2*i+1, signersH
				}
			}
		}
		if rec < 0 || rec >= bodies.Len() {
			http.NotFound(w, r)
			return
		}
		wh := w.Header()
		for k, v := range h {
			wh[k] = v
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(bodies.Body(rec))
	})
}

// lookup returns the index of the person id names.
func lookup(index map[uuid.UUID]int32, id string) (int, bool) {
	u, err := uuid.Parse(id)
	if err != nil {
		return 0, false
	}
	i, ok := index[u]
	return int(i), ok
}

// answerHeader returns h less Date and Content-Length.
func answerHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, v := range h {
		if k != "Date" && k != "Content-Length" {
			out[k] = v
		}
	}
	return out
}

// StartBareHandler serves h on a free loopback port: over HTTPS (TLS 1.3
// only, HTTP/1.1 with keep-alive) when cert is not nil, else plain HTTP.
func StartBareHandler(h http.Handler, cert *tls.Certificate) (*Bare, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// No error log: wrk's check that the port connects ends a TLS
	// handshake before it begins, which net/http would log.
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	scheme := "http"
	if cert != nil {
		scheme = "https"
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS13, NextProtos: []string{"http/1.1"}}
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	go func() { _ = srv.Serve(ln) }()
	return &Bare{URL: scheme + "://" + ln.Addr().String(), srv: srv}, nil
}
