package soak

import (
	"strings"
	"testing"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/lookup/persons/internal/testing/fixtures"
)

func TestLookupTargets(t *testing.T) {
	p := fixtures.NewPopulation(4, 4, 2)
	tr := LookupTargets("http://api", p, []string{"a", "b", "c"})
	tests := []struct {
		name   string
		prefix string
		suffix string
		token  string
	}{
		{name: "person", prefix: "http://api/api/v1/persons/", token: "Bearer a"},
		{name: "signers", prefix: "http://api/api/v1/authorized-signers?consumer_id=", suffix: "&expand=PROTECTED_PERSONAL_DATA", token: "Bearer b"},
		{name: "person again", prefix: "http://api/api/v1/persons/", token: "Bearer c"},
		{name: "tokens rotate", prefix: "http://api/api/v1/authorized-signers?consumer_id=", suffix: "&expand=PROTECTED_PERSONAL_DATA", token: "Bearer a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tg vegeta.Target
			if err := tr(&tg); err != nil {
				t.Fatal(err)
			}
			if tg.Method != "GET" || !strings.HasPrefix(tg.URL, tt.prefix) || !strings.HasSuffix(tg.URL, tt.suffix) ||
				tg.Header.Get("Authorization") != tt.token {
				t.Errorf("target %s %s %q, want GET %s<id>%s %q", tg.Method, tg.URL, tg.Header.Get("Authorization"), tt.prefix, tt.suffix, tt.token)
			}
		})
	}
}

// TestSoakPathSpreads: the consumers read are spread over the whole
// population, not a few.
func TestSoakPathSpreads(t *testing.T) {
	const people, requests = 1000, 20000
	seen := map[int]bool{}
	for k := range uint64(requests) {
		_, id := soakPath(k, people)
		if id < 0 || id >= people {
			t.Fatalf("soakPath(%d) = consumer %d, out of [0, %d)", k, id, people)
		}
		seen[id] = true
	}
	if len(seen) < people*99/100 {
		t.Errorf("%d requests read %d of %d consumers, want nearly all", requests, len(seen), people)
	}
}
