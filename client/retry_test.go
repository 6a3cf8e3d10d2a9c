package client_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lookup/persons/client"
)

// TestBackoffRetries: a failure that says nothing of when to retry (a
// 502, 503 or 504 without Retry-After) is retried after a backoff with
// jitter; one with Retry-After after that wait; nothing else is.
func TestBackoffRetries(t *testing.T) {
	ok := answer{status: 200, body: personJSON, header: map[string]string{"Lookup-Position": "9"}}
	page := func(status int, hdr map[string]string) answer { // a proxy's page, not a problem
		return answer{status: status, header: hdr, body: "<html>bad gateway</html>"}
	}
	for _, tc := range []struct {
		name             string
		answers          []answer
		timeout          time.Duration
		wantErr          error // nil: success
		wantStatus       int   // of the final *Problem
		wantAttempts     int
		minWait, maxWait time.Duration
	}{
		{"502, then 200", []answer{page(502, nil), ok}, 0, nil, 0, 2, client.RetryBackoff / 2, client.RetryBackoff},
		{"504, 504, then 200", []answer{page(504, nil), page(504, nil), ok}, 0, nil, 0, 3, 3 * client.RetryBackoff / 2, 3 * client.RetryBackoff},
		{"503 stale without Retry-After, then 200", []answer{problemAnswer(503, "stale", nil), ok}, 0, nil, 0, 2, client.RetryBackoff / 2, client.RetryBackoff},
		{"502 with Retry-After", []answer{page(502, map[string]string{"Retry-After": "2"}), ok}, 0, nil, 0, 2, 2 * time.Second, 2 * time.Second},
		{"502 always: bounded", []answer{page(502, nil)}, 0, nil, 502, 3, 3 * client.RetryBackoff / 2, 3 * client.RetryBackoff},
		{"a backoff beyond the deadline", []answer{page(504, nil), ok}, client.RetryBackoff / 4, nil, 504, 1, 0, 0},
		{"404 not retried", []answer{problemAnswer(404, "not-found", nil), ok}, 0, client.ErrNotFound, 404, 1, 0, 0},
		{"429 not retried", []answer{page(429, map[string]string{"Retry-After": "1"}), ok}, 0, nil, 429, 1, 0, 0},
		{"500 not retried", []answer{page(500, nil), ok}, 0, nil, 500, 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := &fakeTransport{answers: tc.answers}
				c := newClient(t, f)
				ctx := t.Context()
				if tc.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.timeout)
					defer cancel()
				}
				start := time.Now()
				res, err := c.GetPerson(ctx, personID)
				if waited := time.Since(start); waited < tc.minWait || waited > tc.maxWait {
					t.Errorf("waited %v, want %v to %v", waited, tc.minWait, tc.maxWait)
				}
				if len(f.reqs) != tc.wantAttempts {
					t.Errorf("%d requests, want %d", len(f.reqs), tc.wantAttempts)
				}
				if tc.wantErr == nil && tc.wantStatus == 0 {
					if err != nil || res.Meta.Attempts != tc.wantAttempts {
						t.Fatalf("res, err = %+v, %v", res, err)
					}
					return
				}
				var p *client.Problem
				if !errors.As(err, &p) || p.Status != tc.wantStatus || p.Attempts != tc.wantAttempts || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
					t.Fatalf("err = %v (%+v), want a %d after %d attempts", err, p, tc.wantStatus, tc.wantAttempts)
				}
				if errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("err = %v: the context was not done when the call returned", err)
				}
			})
		})
	}
}

// TestCancelRacingThe503: the caller cancels while the service answers
// position-not-reached; the call's error is the cancel's, not an outage.
func TestCancelRacingThe503(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	f := &fakeTransport{answers: []answer{problemAnswer(503, "position-not-reached", map[string]string{"Retry-After": "1"})}}
	f.answers[0].onRecvd = func(*http.Request) { cancel() } // the answer comes back after the cancel
	c := newClient(t, f)
	_, err := c.GetPerson(ctx, personID, client.MinPosition(7))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want one matching context.Canceled", err)
	}
	if !errors.Is(err, client.ErrPositionNotReached) || len(f.reqs) != 1 {
		t.Fatalf("err = %v after %d requests, want the 503 it cut short kept", err, len(f.reqs))
	}
}

// TestDeadlineDuringThePositionWait: the deadline passes while the
// service waits for the position; the call's error is the deadline's.
func TestDeadlineDuringThePositionWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		f := &fakeTransport{answers: []answer{problemAnswer(503, "position-not-reached", map[string]string{"Retry-After": "1"})}}
		f.answers[0].onRecvd = func(r *http.Request) { <-r.Context().Done() } // the service's wait outlasts the deadline
		c := newClient(t, f)
		_, err := c.GetPerson(ctx, personID, client.MinPosition(7), client.MaxWait(2*time.Second))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want one matching context.DeadlineExceeded", err)
		}
	})
}

// failing is an httptest server that fails its first n requests with
// status, then answers personJSON.
func failing(t *testing.T, n int32, status int) (*httptest.Server, *atomic.Int32) {
	var got atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if got.Add(1) <= n {
			w.WriteHeader(status)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(personJSON))
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestRetriesOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		status, fails int
		retries       int
		wantAttempts  int
		wantOK        bool
	}{
		{502, 2, client.DefaultRetries, 3, true},
		{503, 1, client.DefaultRetries, 2, true},
		{504, 2, client.DefaultRetries, 3, true},
		{502, 3, client.DefaultRetries, 3, false},
		{502, 1, 0, 1, false}, // retries off
		{500, 1, client.DefaultRetries, 1, false},
		{400, 1, client.DefaultRetries, 1, false},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			srv, got := failing(t, int32(tc.fails), tc.status)
			c, err := client.New(srv.URL, client.WithToken("tok"), client.WithRetries(tc.retries))
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.GetPerson(t.Context(), personID)
			if n := int(got.Load()); n != tc.wantAttempts {
				t.Errorf("the server saw %d requests, want %d", n, tc.wantAttempts)
			}
			if !tc.wantOK {
				var p *client.Problem
				if !errors.As(err, &p) || p.Status != tc.status || p.Attempts != tc.wantAttempts {
					t.Fatalf("err = %v, want the %d after %d attempts", err, tc.status, tc.wantAttempts)
				}
				return
			}
			if err != nil || res.Meta.Attempts != tc.wantAttempts {
				t.Fatalf("res, err = %+v, %v; want an answer after %d attempts", res, err, tc.wantAttempts)
			}
		})
	}
}

// resetListener resets (RST) the first n connections it accepts.
type resetListener struct {
	net.Listener
	n atomic.Int32
}

func (l *resetListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil || l.n.Add(-1) < 0 {
			return c, err
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
}

func TestConnectionResetIsRetried(t *testing.T) {
	var served atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(personJSON))
	}))
	rl := &resetListener{Listener: srv.Listener}
	rl.n.Store(2)
	srv.Listener = rl
	srv.Start()
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("tok"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.GetPerson(t.Context(), personID)
	if err != nil || res.Meta.Attempts != 3 || served.Load() != 1 {
		t.Fatalf("res, err = %+v, %v (%d served); want an answer at the third attempt", res, err, served.Load())
	}

	rl.n.Store(1)
	fresh := &http.Transport{} // not the idle connection of the answer above
	defer fresh.CloseIdleConnections()
	c0, err := client.New(srv.URL, client.WithToken("tok"), client.WithRetries(0), client.WithHTTPClient(&http.Client{Transport: fresh}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c0.GetPerson(t.Context(), personID); err == nil {
		t.Fatal("with retries off, a reset connection gave an answer")
	}
}

// countingTransport counts the requests it is given.
type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

func TestConnectionRefusedIsRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close() // nothing listens there now
	ct := &countingTransport{next: http.DefaultTransport}
	c, err := client.New("http://"+addr, client.WithToken("tok"), client.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.GetPerson(t.Context(), personID)
	if err == nil || ct.n.Load() != 1+client.DefaultRetries || !strings.Contains(err.Error(), "3 attempts") {
		t.Fatalf("err = %v after %d requests, want a failure after %d", err, ct.n.Load(), 1+client.DefaultRetries)
	}
	if errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v matches context.Canceled", err)
	}
}
