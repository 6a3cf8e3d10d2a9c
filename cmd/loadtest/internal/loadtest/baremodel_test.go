package loadtest

import (
	"context"
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// fakeModelAPI answers GET person and GET signers of p's consumers as
// lookupd would (a body per id and route, fixed headers), 404 otherwise;
// the body of person changed is altered.
func fakeModelAPI(p *fixtures.Population, changed int) http.Handler {
	index := map[string]int{}
	for i := range p.People() {
		index[p.ConsumerID(i)] = i
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "req-1")
		id, route := strings.TrimPrefix(r.URL.Path, "/api/v1/persons/"), "person"
		if r.URL.Path == "/api/v1/authorized-signers" {
			id, route = r.URL.Query().Get("consumer_id"), "signers"
			if r.URL.Query().Get("expand") != "PROTECTED_PERSONAL_DATA" {
				http.NotFound(w, r)
				return
			}
		}
		i, ok := index[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		body := `{"` + route + `":"` + id + `","n":` + strings.Repeat("1", i%7+1) + `}`
		if i == changed {
			body += " "
		}
		_, _ = w.Write([]byte(body))
	})
}

// TestFetchServeCheck: the answers FetchBodies captures are what the model
// handler answers, byte for byte with the captured headers, and
// CheckBodies tells a server that answers them from one that does not.
func TestFetchServeCheck(t *testing.T) {
	p := fixtures.NewPopulation(200, 200, 5)
	api := httptest.NewServer(fakeModelAPI(p, -1))
	defer api.Close()
	dir := t.TempDir()
	w, err := NewBodyWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	var progress []int
	f, err := FetchBodies(context.Background(), api.Client(), api.URL, "tok", p, w, 4, func(done int) { progress = append(progress, done) })
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if len(progress) == 0 || progress[len(progress)-1] != 200 {
		t.Errorf("progress %v, want it to end at 200", progress)
	}
	if got := f.PersonHeader.Get("X-Request-Id"); got != "req-1" || f.PersonHeader.Get("Content-Length") != "" {
		t.Errorf("captured person header %v: want X-Request-Id req-1, no Content-Length", f.PersonHeader)
	}
	bodies, err := ReadBodies(dir)
	if err != nil {
		t.Fatal(err)
	}
	bare, err := StartBareHandler(ModelHandler(p, bodies, f.PersonHeader, f.SignersHeader), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	c := &http.Client{Timeout: 5 * time.Second}
	for _, i := range []int{0, 1, 99, 199} {
		for _, uri := range []string{PersonURI(p.ConsumerID(i)), SignersURI(p.ConsumerID(i))} {
			if err := SameBody(c, bare.URL, api.URL, uri, "tok"); err != nil {
				t.Errorf("person %d, %s: %v", i, uri, err)
			}
		}
	}
	r, err := Get(c, bare.URL+PersonURI(p.ConsumerID(3)), "")
	if err != nil || r.Header.Get("X-Request-Id") != "req-1" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("bare answer headers %v, %v: want the captured ones", r.Header, err)
	}
	idx := []int{0, 7, 150, 199}
	if err := CheckBodies(c, api.URL, "tok", p, bodies, idx); err != nil {
		t.Errorf("CheckBodies against the same answers: %v", err)
	}
	other := httptest.NewServer(fakeModelAPI(p, 150))
	defer other.Close()
	if err := CheckBodies(c, other.URL, "tok", p, bodies, idx); err == nil || !strings.Contains(err.Error(), "person 150") {
		t.Errorf("CheckBodies against another answer for person 150: err = %v, want it named", err)
	}
}

func TestModelHandlerRefuses(t *testing.T) {
	p := fixtures.NewPopulation(2, 0, 5)
	dir := t.TempDir()
	w, err := NewBodyWriter(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{"p0", "s0", "p1", "s1"} {
		if err := w.Append([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	bodies, err := ReadBodies(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := ModelHandler(p, bodies, http.Header{}, http.Header{})
	id := p.ConsumerID(1)
	tests := []struct {
		name, uri  string
		wantStatus int
		wantBody   string
	}{
		{"person", PersonURI(id), 200, "p1"},
		{"signers", SignersURI(id), 200, "s1"},
		{"unknown id", PersonURI("00000000-0000-4000-8000-000000000000"), 404, ""},
		{"not an id", PersonURI("x"), 404, ""},
		{"signers without expand", "/api/v1/authorized-signers?consumer_id=" + id, 404, ""},
		{"person with a query", PersonURI(id) + "?a=b", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.uri, nil))
			if rec.Code != tt.wantStatus || (tt.wantBody != "" && rec.Body.String() != tt.wantBody) {
				t.Errorf("got %d %q, want %d %q", rec.Code, rec.Body.String(), tt.wantStatus, tt.wantBody)
			}
		})
	}
}

// TestBareOverTLS: the bare server speaks TLS 1.3 with the run's
// certificate, which ClientTLS trusts.
func TestBareOverTLS(t *testing.T) {
	cert, err := NewCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bare, err := StartBareHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }), &cert.Pair)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	if !strings.HasPrefix(bare.URL, "https://127.0.0.1:") {
		t.Fatalf("URL %q, want https://127.0.0.1:port", bare.URL)
	}
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: cert.ClientTLS()}}
	resp, err := c.Get(bare.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.TLS == nil || resp.TLS.Version != tls.VersionTLS13 || resp.Proto != "HTTP/1.1" {
		t.Errorf("TLS %v, protocol %s: want TLS 1.3, HTTP/1.1", resp.TLS, resp.Proto)
	}
}
