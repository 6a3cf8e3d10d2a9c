package loadtest

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
)

// Bare is the ceiling lookupd is measured against: a plain net/http
// server answering the bytes captured from lookupd (StartBareHandler).
type Bare struct {
	URL string // base URL
	srv *http.Server
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
