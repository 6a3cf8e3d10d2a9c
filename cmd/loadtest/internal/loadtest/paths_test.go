package loadtest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// pathRecorder answers 200 and records the request URIs and tokens seen.
type pathRecorder struct {
	mu     sync.Mutex
	uris   map[string]int
	tokens map[string]int
}

func newPathRecorder() *pathRecorder {
	return &pathRecorder{uris: map[string]int{}, tokens: map[string]int{}}
}

func (p *pathRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.uris[r.URL.RequestURI()]++
	p.tokens[r.Header.Get("Authorization")]++
	p.mu.Unlock()
	_, _ = w.Write([]byte("{}"))
}

// testURIs returns n distinct request URIs of both routes.
func testURIs(n int) []string {
	p := fixtures.NewPopulation(n, 0, 3)
	var out []string
	for i := range n {
		if i%2 == 0 {
			out = append(out, PersonURI(p.ConsumerID(i)))
		} else {
			out = append(out, SignersURI(p.ConsumerID(i)))
		}
	}
	return out
}

// TestPathsRoundTrip: the paths Go writes are the paths the load
// generators send, every one of them, and nothing else, with the tokens
// in rotation: wrk (when installed) through its Lua script reading the
// file, two threads each taking its share, and vegeta from the list.
func TestPathsRoundTrip(t *testing.T) {
	uris := testURIs(40)
	file := filepath.Join(t.TempDir(), "uris.paths")
	if err := WritePaths(file, uris); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), strings.Join(uris, "\n")+"\n"; got != want {
		t.Fatalf("path file holds %q, want %q", got, want)
	}
	tests := []struct {
		name string
		run  func(t *testing.T, s Scenario) (Result, error)
	}{
		{"wrk", func(t *testing.T, s Scenario) (Result, error) {
			t.Helper()
			path, err := exec.LookPath("wrk")
			if err != nil || testing.Short() {
				t.Skip("wrk not installed, or -short")
			}
			return Wrk{Path: path, Threads: 2, Connections: 4, ScriptDir: t.TempDir()}.Run(context.Background(), s, time.Second)
		}},
		{"vegeta closed loop", func(t *testing.T, s Scenario) (Result, error) {
			t.Helper()
			return Vegeta{Connections: 4}.Run(context.Background(), s, 500*time.Millisecond)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newPathRecorder()
			srv := httptest.NewServer(rec)
			defer srv.Close()
			r, err := tt.run(t, Scenario{Name: "s", URL: srv.URL, Paths: uris, PathFile: file, Tokens: []string{"t1", "t2"}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests < uint64(len(uris)) || r.Errors != 0 {
				t.Fatalf("result %+v: want at least %d requests, no errors", r, len(uris))
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			for _, u := range uris {
				if rec.uris[u] == 0 {
					t.Errorf("%s never requested", u)
				}
			}
			if len(rec.uris) != len(uris) {
				t.Errorf("%d distinct URIs requested, want the file's %d: %v", len(rec.uris), len(uris), keys(rec.uris))
			}
			if rec.tokens["Bearer t1"] == 0 || rec.tokens["Bearer t2"] == 0 || len(rec.tokens) != 2 {
				t.Errorf("Authorization headers seen %v, want Bearer t1 and Bearer t2", rec.tokens)
			}
		})
	}
}

func keys(m map[string]int) string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s x%d", k, v))
	}
	return strings.Join(out, ", ")
}
