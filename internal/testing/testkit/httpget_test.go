package testkit

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Auth", r.Header.Get("Authorization"))
		w.Header().Set("X-Echo", r.Header.Get("X-Request-Id"))
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte(r.Method + " " + r.URL.Path))
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		name     string
		client   *http.Client
		token    string
		headers  map[string]string
		wantAuth string
		wantEcho string
	}{
		{name: "token and header", token: "tok", headers: map[string]string{"X-Request-Id": "r-1"}, wantAuth: "Bearer tok", wantEcho: "r-1"},
		{name: "no token: no Authorization", client: srv.Client()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := HTTPGet(tc.client, srv.URL+"/x", tc.token, tc.headers)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if r.Status != http.StatusTeapot || string(r.Body) != "GET /x" {
				t.Errorf("got %d %q, want 418 %q", r.Status, r.Body, "GET /x")
			}
			if got := r.Header.Get("X-Auth"); got != tc.wantAuth {
				t.Errorf("Authorization sent = %q, want %q", got, tc.wantAuth)
			}
			if got := r.Header.Get("X-Echo"); got != tc.wantEcho {
				t.Errorf("X-Request-Id sent = %q, want %q", got, tc.wantEcho)
			}
		})
	}
}

func TestGetUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	if _, err := HTTPGet(nil, url, "", nil); err == nil {
		t.Error("Get of a closed server: nil error, want one")
	}
}
