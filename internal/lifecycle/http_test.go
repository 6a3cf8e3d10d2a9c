package lifecycle

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestKnownHTTPExceptions holds the table "Known exceptions" of
// docs/api.md true: these requests are answered by net/http itself, in
// plain text, before any handler of ours (so without our headers).
func TestKnownHTTPExceptions(t *testing.T) {
	var reached atomic.Int64
	srv := NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		w.Header().Set("X-Request-Id", "ours")
	}), slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })

	tests := []struct {
		name   string
		raw    string
		status int
	}{
		{"bad %-escape in the path", "GET /api/v1/persons/%zz HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusBadRequest},
		{"space in the path", "GET /a b HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusBadRequest},
		{"invalid header name", "GET / HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n", http.StatusBadRequest},
		{"no Host header", "GET / HTTP/1.1\r\n\r\n", http.StatusBadRequest},
		{"headers over 64 KiB", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 70<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"Expect other than 100-continue", "GET / HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n", http.StatusExpectationFailed},
		{"Transfer-Encoding other than chunked", "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", http.StatusNotImplemented},
		{"unknown HTTP version", "GET / HTTP/2.5\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := reached.Load()
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(c, tt.raw); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("read response: %v", err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if ct := resp.Header.Get("Content-Type"); strings.Contains(ct, "problem+json") {
				t.Errorf("Content-Type %q: net/http answered with our format, docs/api.md says it cannot", ct)
			}
			if reached.Load() != before || resp.Header.Get("X-Request-Id") != "" {
				t.Errorf("the request reached the handler; docs/api.md lists it as answered before any handler")
			}
		})
	}
	// A bad %-escape in the query string does reach the handler (and so
	// our 400 problem naming "query").
	resp, err := http.Get("http://" + ln.Addr().String() + "/api/v1/authorized-signers?consumer_id=%zz")
	if err != nil {
		t.Fatalf("a bad %%-escape in the query: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || reached.Load() == 0 {
		t.Errorf("a bad %%-escape in the query: %d, reached %d; want the handler to answer", resp.StatusCode, reached.Load())
	}
}

// TestServerOptionsReachTheHandlers: lookupd's HTTP servers hand OPTIONS *
// to their handlers instead of net/http's built-in answer, which lacks
// the headers of every answer.
func TestServerOptionsReachTheHandlers(t *testing.T) {
	var reached atomic.Bool
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = NewHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Store(r.RequestURI == "*")
		w.Header().Set("X-Content-Type-Options", "nosniff")
	}), slog.New(slog.DiscardHandler))
	srv.Start()
	defer srv.Close()
	req, err := http.NewRequest(http.MethodOptions, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = "*"
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !reached.Load() || !strings.EqualFold(resp.Header.Get("X-Content-Type-Options"), "nosniff") {
		t.Errorf("OPTIONS * did not reach the handler (reached %v, headers %v)", reached.Load(), resp.Header)
	}
}
