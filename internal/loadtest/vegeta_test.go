package loadtest

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"
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
