package query

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestServerOptions: OPTIONS * (about the server, not a resource) is
// answered by the API, not net/http's built-in handler: 200, the methods
// of every route in Allow, no content, and the headers of every answer.
// Another method on * finds no route.
func TestServerOptions(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodOptions, "*", nil))
	resp := rec.Result()
	checkCommonHeaders(t, resp)
	if resp.StatusCode != http.StatusOK || rec.Body.Len() != 0 {
		t.Errorf("OPTIONS * = %d with %d bytes, want 200 without content", resp.StatusCode, rec.Body.Len())
	}
	for h, want := range map[string]string{"Allow": "GET, HEAD", "Content-Length": "0"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("%s = %q, want %q", h, got, want)
		}
	}

	req := httptest.NewRequest(http.MethodGet, "*", nil)
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	checkCommonHeaders(t, rec.Result())
	checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probRouteNotFound})

	// Over a server configured as lookupd's, the request reaches the API.
	srv := httptest.NewUnstartedServer(s)
	srv.Config.DisableGeneralOptionsHandler = true
	srv.Start()
	defer srv.Close()
	req, err := http.NewRequest(http.MethodOptions, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = "*" // the request line's target is *
	resp, err = srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	checkCommonHeaders(t, resp)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("OPTIONS * over HTTP = %d, Allow %q; want 200, GET, HEAD", resp.StatusCode, resp.Header.Get("Allow"))
	}
}
