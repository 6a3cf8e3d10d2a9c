package loadtest

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestVegeta(t *testing.T) {
	tests := []struct {
		name string
		run  func(s Scenario) (Result, error)
	}{
		{"closed loop", func(s Scenario) (Result, error) {
			return Vegeta{Connections: 4}.Run(context.Background(), s, 300*time.Millisecond)
		}},
		{"open loop", func(s Scenario) (Result, error) {
			return OpenLoop(context.Background(), s, 300, 300*time.Millisecond, 8)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &authRecorder{}
			srv := httptest.NewServer(rec)
			defer srv.Close()
			r, err := tt.run(Scenario{Name: "s", URL: srv.URL + "/x", Tokens: []string{"t1", "t2", "bad"}})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"Bearer bad", "Bearer t1", "Bearer t2"}; !slices.Equal(rec.headers(), want) {
				t.Errorf("Authorization headers seen %q, want %q", rec.headers(), want)
			}
			if r.Requests < 3 || r.Errors == 0 || r.Errors >= r.Requests || r.Rate <= 0 {
				t.Errorf("result %+v: want requests, some errors (the 500s) but not all, and a rate", r)
			}
			if want := fmt.Sprintf("%d (HTTP 500: %d)", r.Errors, r.Errors); r.ErrorsText() != want {
				t.Errorf("errors %q, want %q", r.ErrorsText(), want)
			}
		})
	}
	t.Run("no token", func(t *testing.T) {
		rec := &authRecorder{}
		srv := httptest.NewServer(rec)
		defer srv.Close()
		if _, err := OpenLoop(context.Background(), Scenario{Name: "s", URL: srv.URL}, 100, 100*time.Millisecond, 8); err != nil {
			t.Fatal(err)
		}
		if got := rec.headers(); !slices.Equal(got, []string{""}) {
			t.Errorf("Authorization headers seen %q, want none", got)
		}
	})
}

func TestErrorsText(t *testing.T) {
	tests := []struct {
		name string
		r    Result
		want string
	}{
		{"none", Result{}, "0"},
		{"kinds unknown (wrk)", Result{Errors: 3}, "3"},
		{"most frequent first, then by name", Result{Errors: 7, ErrorKinds: map[string]uint64{"HTTP 503": 2, "context deadline exceeded": 4, "EOF": 1}},
			"7 (context deadline exceeded: 4, HTTP 503: 2, EOF: 1)"},
		{"ties by name", Result{Errors: 2, ErrorKinds: map[string]uint64{"b": 1, "a": 1}}, "2 (a: 1, b: 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.ErrorsText(); got != tt.want {
				t.Errorf("ErrorsText() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestErrorKind(t *testing.T) {
	tests := []struct {
		name string
		res  vegeta.Result
		want string
	}{
		{"status", vegeta.Result{Code: 503, Error: "503 Service Unavailable"}, "HTTP 503"},
		{"transport error, URL left out", vegeta.Result{Error: `Get "http://127.0.0.1:1/api/v1/persons/0b0b": context deadline exceeded`}, "context deadline exceeded"},
		{"error of one clause", vegeta.Result{Error: "EOF"}, "EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorKind(&tt.res); got != tt.want {
				t.Errorf("errorKind = %q, want %q", got, tt.want)
			}
		})
	}
}
