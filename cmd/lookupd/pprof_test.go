package main

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/projector"
)

func testAdminHandler(pprof bool) http.Handler {
	src := &fakeProgress{caughtUp: closedChan, progress: func() projector.Progress { return projector.Progress{} }}
	return newAdminHandler(&readiness{src: src}, prometheus.NewRegistry(), nil, pprof)
}

// TestPProfSetting: net/http/pprof is on the admin listener only when
// LOOKUP_PPROF is true; off (the default) its paths are 404.
func TestPProfSetting(t *testing.T) {
	paths := []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline", "/debug/pprof/symbol"}
	for _, on := range []bool{false, true} {
		h := testAdminHandler(on)
		for _, path := range paths {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
			want := http.StatusNotFound
			if on {
				want = http.StatusOK
			}
			if rec.Code != want {
				t.Errorf("pprof %v: GET %s = %d, want %d", on, path, rec.Code, want)
			}
		}
	}
	c, err := newCommand("serve", "help", env(nil), serveSettings...)
	if err != nil {
		t.Fatal(err)
	}
	if c.cfg.PProf {
		t.Error("pprof is on by default")
	}
	c, err = newCommand("serve", "help", env(map[string]string{"LOOKUP_PPROF": "true"}), serveSettings...)
	if err != nil || !c.cfg.PProf {
		t.Errorf("LOOKUP_PPROF=true: pprof %v, err %v", c != nil && c.cfg.PProf, err)
	}
	if _, err := newCommand("serve", "help", env(map[string]string{"LOOKUP_PPROF": "yes please"}), serveSettings...); err == nil {
		t.Error("LOOKUP_PPROF=yes please accepted")
	}
}

// TestPProfProfileBeyondWriteTimeout: a CPU profile longer than the admin
// listener's write timeout is answered (pprof alone refuses it).
func TestPProfProfileBeyondWriteTimeout(t *testing.T) {
	srv := httptest.NewUnstartedServer(testAdminHandler(true))
	srv.Config.WriteTimeout = 500 * time.Millisecond
	srv.Start()
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/debug/pprof/profile?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read profile: %v", err)
	}
	if resp.StatusCode != http.StatusOK || len(body) == 0 {
		t.Errorf("profile = %d with %d bytes: %.200s", resp.StatusCode, len(body), body)
	}
}

// TestAdminHeaders: every admin answer carries X-Content-Type-Options:
// nosniff, and OPTIONS * is answered by the admin listener.
func TestAdminHeaders(t *testing.T) {
	h := testAdminHandler(true)
	for _, path := range []string{"/livez", "/readyz", "/metrics", "/debug/pprof/", "/nope"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("GET %s: X-Content-Type-Options = %q, want nosniff", path, got)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodOptions, "*", nil))
	if rec.Code != http.StatusOK || rec.Header().Get("Allow") != "GET, HEAD" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("OPTIONS * = %d, headers %v", rec.Code, rec.Header())
	}
}

// TestServerOptionsReachTheHandlers: lookupd's HTTP servers hand OPTIONS *
// to their handlers instead of net/http's built-in answer, which lacks
// the headers of every answer.
func TestServerOptionsReachTheHandlers(t *testing.T) {
	var reached atomic.Bool
	srv := httptest.NewUnstartedServer(nil)
	srv.Config = newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
