package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/query"
)

// TestServeTokenCacheSetting: LOOKUP_TOKEN_CACHE_SIZE reaches the API:
// with the default a token presented again is a cache hit on /metrics; with
// 0 there is no hit.
func TestServeTokenCacheSetting(t *testing.T) {
	ns, js := personsNATS(t)
	c := events.Consumer{ConsumerID: demoID("u-consumer", 0), BusinessID: demoID("business", 0), FirstName: "A", LastName: "B"}
	publish(t, js, c)
	tests := []struct {
		name     string
		size     string // "" = default
		wantHits string
	}{
		{"default", "", "2"},
		{"off", "0", "0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			environ := serveEnv(t, ns, t.TempDir())
			environ["LOOKUP_TOKEN_CACHE_SIZE"] = tc.size
			p := start(t, environ, "serve")
			addrs := p.addrs(t)
			waitReady(t, addrs["admin"])
			tok := token(t, tokenRequest{Issuer: testIssuer, Audience: testAudience})
			for i := 0; i < 3; i++ {
				if code, body, err := get("http://"+addrs["api"]+"/api/v1/persons/"+c.ConsumerID, tok); err != nil || code != http.StatusOK {
					t.Fatalf("GET person: %d %s %v", code, body, err)
				}
			}
			_, metrics, err := get("http://"+addrs["admin"]+"/metrics", "")
			if err != nil {
				t.Fatal(err)
			}
			m := regexp.MustCompile(`(?m)^lookup_token_cache_hits_total (\S+)$`).FindSubmatch(metrics)
			if m == nil || string(m[1]) != tc.wantHits {
				t.Errorf("lookup_token_cache_hits_total = %q, want %s", m, tc.wantHits)
			}
		})
	}
}

// TestPlainHTTPJWKSURLRefused: a plain http:// JWKS URL to a host that is
// not loopback is a start-up error naming the opt-out.
func TestPlainHTTPJWKSURLRefused(t *testing.T) {
	cfg := config{JWKSURL: "http://idp.example/.well-known/jwks.json"}
	_, err := loadKeys(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if !errors.Is(err, query.ErrJWKSInsecureURL) || !strings.Contains(err.Error(), "LOOKUP_JWKS_ALLOW_HTTP=true") {
		t.Errorf("loadKeys = %v, want ErrJWKSInsecureURL naming LOOKUP_JWKS_ALLOW_HTTP=true", err)
	}
}
