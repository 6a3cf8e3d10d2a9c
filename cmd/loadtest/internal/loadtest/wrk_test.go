package loadtest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseWrk(t *testing.T) {
	tests := []struct {
		name    string
		out     string
		want    Result
		wantErr string
	}{
		{
			name: "summary line among wrk's output",
			out: "Running 2s test @ http://127.0.0.1:1/\n  2 threads and 64 connections\n" +
				`LOADTEST {"requests":150000,"duration_us":2000000,"errors":2,"p50_us":700,"p99_us":6100}` + "\n",
			want: Result{Requests: 150000, Rate: 75000, P50: 700 * time.Microsecond, P99: 6100 * time.Microsecond, Errors: 2},
		},
		{name: "no summary", out: "unable to connect\n", wantErr: "no summary line"},
		{name: "no duration", out: `LOADTEST {"requests":1,"duration_us":0}` + "\n", wantErr: "no duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseWrk([]byte(tt.out))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestTokenEnv(t *testing.T) {
	got := tokenEnv([]string{"a.b.c", "d.e.f"})
	want := []string{"LOADTEST_TOKENS=2", "LOADTEST_TOKEN_1=a.b.c", "LOADTEST_TOKEN_2=d.e.f"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// authRecorder answers 200 and records the Authorization headers it saw
// (a status of 500 for the header "Bearer bad").
type authRecorder struct {
	mu   sync.Mutex
	seen map[string]int
}

func (a *authRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Get("Authorization")
	a.mu.Lock()
	if a.seen == nil {
		a.seen = map[string]int{}
	}
	a.seen[h]++
	a.mu.Unlock()
	if h == "Bearer bad" {
		w.WriteHeader(http.StatusInternalServerError)
	}
	_, _ = w.Write([]byte("{}"))
}

func (a *authRecorder) headers() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var hs []string
	for h := range a.seen {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	return hs
}

// TestWrkRotatesTokens runs the real wrk (when installed) for a second:
// its script must send every token and count the non-2xx answers.
func TestWrkRotatesTokens(t *testing.T) {
	path, err := exec.LookPath("wrk")
	if err != nil || testing.Short() {
		t.Skip("wrk not installed, or -short")
	}
	rec := &authRecorder{}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	w := Wrk{Path: path, Threads: 1, Connections: 2, ScriptDir: t.TempDir()}
	r, err := w.Run(context.Background(), Scenario{Name: "s", URL: srv.URL + "/x?y=1", Tokens: []string{"t1", "t2", "bad"}}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Bearer bad", "Bearer t1", "Bearer t2"}; !slices.Equal(rec.headers(), want) {
		t.Errorf("Authorization headers seen %q, want %q", rec.headers(), want)
	}
	if r.Requests == 0 || r.Errors == 0 || r.Errors >= r.Requests || r.Rate <= 0 || r.P99 <= 0 {
		t.Errorf("result %+v: want requests, some errors (the 500s) but not all, a rate and a p99", r)
	}
	if r.Scenario != "s" || r.Tool != "wrk -t1 -c2" {
		t.Errorf("scenario %q, tool %q; want s, wrk -t1 -c2", r.Scenario, r.Tool)
	}
}
