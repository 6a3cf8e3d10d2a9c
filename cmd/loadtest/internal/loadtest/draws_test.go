package loadtest

import (
	"slices"
	"strings"
	"testing"

	"github.com/lookup/persons/internal/testing/fixtures"
)

func TestDraw(t *testing.T) {
	const people, n = 200, 40000
	tests := []struct {
		name string
		dist string
		// check gets the share of the draws that fell on the most drawn
		// person and on the least drawn one.
		check func(top, bottom float64) bool
		want  string
	}{
		{name: "uniform: every person near 1/200", dist: fixtures.Uniform,
			check: func(top, bottom float64) bool { return top < 2.0/people && bottom > 0.5/people },
			want:  "top < 1%, bottom > 0.25%"},
		{name: "zipf: one person far above the rest", dist: fixtures.Zipf,
			check: func(top, bottom float64) bool { return top > 10.0/people && bottom < 0.5/people },
			want:  "top > 5%, bottom < 0.25%"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx, err := Draw(tt.dist, n, people, 7)
			if err != nil {
				t.Fatal(err)
			}
			if len(idx) != n {
				t.Fatalf("got %d draws, want %d", len(idx), n)
			}
			counts := make([]int, people)
			for _, i := range idx {
				if i < 0 || i >= people {
					t.Fatalf("draw %d outside [0, %d)", i, people)
				}
				counts[i]++
			}
			top, bottom := float64(slices.Max(counts))/n, float64(slices.Min(counts))/n
			if !tt.check(top, bottom) {
				t.Errorf("most drawn person %.2f%% of the draws, least %.2f%%; want %s", 100*top, 100*bottom, tt.want)
			}
			again, err := Draw(tt.dist, n, people, 7)
			if err != nil || !slices.Equal(again, idx) {
				t.Error("the same seed drew other ids")
			}
			other, err := Draw(tt.dist, n, people, 8)
			if err != nil || slices.Equal(other, idx) {
				t.Error("another seed drew the same ids")
			}
		})
	}
}

func TestDrawRefuses(t *testing.T) {
	tests := []struct {
		name         string
		dist         string
		n, people    int
		wantInErrMsg string
	}{
		{"unknown distribution", "normal", 1, 1, "want uniform or zipf"},
		{"no people", fixtures.Uniform, 1, 0, "over 0 people"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Draw(tt.dist, tt.n, tt.people, 1); err == nil || !strings.Contains(err.Error(), tt.wantInErrMsg) {
				t.Errorf("err = %v, want %q", err, tt.wantInErrMsg)
			}
		})
	}
}

func TestURIs(t *testing.T) {
	p := fixtures.NewPopulation(3, 0, 1)
	got := URIs(p, []int{2, 0}, SignersURI)
	want := []string{
		"/api/v1/authorized-signers?consumer_id=" + p.ConsumerID(2) + "&expand=PROTECTED_PERSONAL_DATA",
		"/api/v1/authorized-signers?consumer_id=" + p.ConsumerID(0) + "&expand=PROTECTED_PERSONAL_DATA",
	}
	if !slices.Equal(got, want) {
		t.Errorf("URIs = %q, want %q", got, want)
	}
}
