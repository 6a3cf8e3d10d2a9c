package loadtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// Bare is the ceiling the dev server is measured against: a plain
// net/http server answering each known request URI (path and query) with
// the status, headers and body captured from lookupd, and 404 otherwise.
type Bare struct {
	URL string // base URL
	srv *http.Server
}

// BareHandler answers each request URI in routes with its captured
// response: the same bytes, the same headers (Date and Content-Length are
// the server's own, as in lookupd).
func BareHandler(routes map[string]Response) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		res, ok := routes[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		for k, v := range res.Header {
			if k != "Date" && k != "Content-Length" {
				h[k] = v
			}
		}
		w.WriteHeader(res.Status)
		_, _ = w.Write(res.Body)
	})
}

// StartBare serves BareHandler(routes) on a free loopback port.
func StartBare(routes map[string]Response) (*Bare, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: BareHandler(routes), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return &Bare{URL: "http://" + ln.Addr().String(), srv: srv}, nil
}

// Close stops the server.
func (b *Bare) Close() error {
	if err := b.srv.Close(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// SameBody fetches uri from both base URLs with token and returns an error
// unless both answer 200 with byte-identical bodies. The error never quotes
// a body (the signers' answer holds personal data).
func SameBody(c *http.Client, baseA, baseB, uri, token string) error {
	a, err := Get(c, baseA+uri, token)
	if err != nil {
		return err
	}
	b, err := Get(c, baseB+uri, token)
	if err != nil {
		return err
	}
	if !bytes.Equal(a.Body, b.Body) {
		i := 0
		for i < len(a.Body) && i < len(b.Body) && a.Body[i] == b.Body[i] {
			i++
		}
		return fmt.Errorf("bodies differ: %d and %d bytes, first difference at byte %d", len(a.Body), len(b.Body), i)
	}
	return nil
}
