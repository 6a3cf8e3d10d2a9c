package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

// TestServeJWKSURL checks serve with keys fetched from a JWKS URL.
func TestServeJWKSURL(t *testing.T) {
	jwks, err := dev.PublicJWKS(testKey())
	if err != nil {
		t.Fatal(err)
	}
	var fetches atomic.Int64
	var down atomic.Bool
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		if down.Load() {
			http.Error(w, "down", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	defer idp.Close()

	ns, _, c := oneConsumerNATS(t)

	environ := serveEnv(t, ns, t.TempDir())
	delete(environ, "LOOKUP_JWKS_FILE")
	environ["LOOKUP_JWKS_URL"] = strings.Replace(idp.URL, "http://", "http://idp:hunter2@", 1) + "/.well-known/jwks.json"
	environ["LOOKUP_LOG_FORMAT"] = "json"
	p := startServe(t, environ, serveOptions{jwksOptions: []auth.JWKSOption{auth.WithJWKSRefreshInterval(20 * time.Millisecond)}})
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	if code, body, err := get("http://"+addrs["api"]+"/api/v1/persons/"+c.ConsumerID, tok); err != nil || code != http.StatusOK {
		t.Errorf("GET person: %d %s %v", code, body, err)
	}
	if fetches.Load() == 0 {
		t.Errorf("JWKS URL never fetched")
	}
	// A failing refresh is logged at Warn, without credentials; the keys
	// held keep verifying.
	down.Store(true)
	testkit.WaitFor(t, 10*time.Second, func() error {
		if !strings.Contains(p.stderr.String(), "JWKS refresh failed") {
			return errors.New("no JWKS refresh failure logged yet")
		}
		return nil
	})
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if !strings.Contains(line, "JWKS refresh failed") {
			continue
		}
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec["level"] != "WARN" || rec["component"] != "jwks" || rec["url"] != idp.URL+"/.well-known/jwks.json" {
			t.Errorf("refresh failure logged as %v, want level WARN, component jwks, the URL without credentials", rec)
		}
	}
	if strings.Contains(p.stderr.String(), "hunter2") {
		t.Errorf("the JWKS URL password reached the logs")
	}
	if code, body, err := get("http://"+addrs["api"]+"/api/v1/persons/"+c.ConsumerID, tok); err != nil || code != http.StatusOK {
		t.Errorf("GET person while the JWKS URL fails: %d %s %v", code, body, err)
	}
	p.cancel()
	if err := p.wait(t, 30*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestEncryptionAtRest checks that LOOKUP_ENCRYPTION_KEY_FILE encrypts the
// read model: it opens with the key and not without it.
func TestEncryptionAtRest(t *testing.T) {
	ns, js := personsNATS(t)
	c := events.Consumer{ConsumerID: dev.DemoID("e-consumer", 0), BusinessID: dev.DemoID("business", 0), FirstName: "Zelda", LastName: "Encrypted"}
	publish(t, js, c)

	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "store.key")
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "data")
	p := start(t, map[string]string{"LOOKUP_NATS_URL": ns.ClientURL(), "LOOKUP_DATA_DIR": dir, "LOOKUP_ENCRYPTION_KEY_FILE": keyFile},
		"project", "--until-caught-up")
	if err := p.wait(t, 60*time.Second); err != nil {
		t.Fatalf("project: %v\n%s", err, p.stderr)
	}
	if _, err := projector.Open(dir, projector.StoreOptions{}); !errors.Is(err, projector.ErrEncryptionKey) {
		t.Errorf("open without the key: %v, want ErrEncryptionKey", err)
	}
	s, err := projector.Open(dir, projector.StoreOptions{EncryptionKey: key})
	if err != nil {
		t.Fatalf("open with the key: %v", err)
	}
	defer s.Close()
	if got, err := s.Person(t.Context(), c.ConsumerID); err != nil || got.LastName != "Encrypted" {
		t.Errorf("person = %+v, %v", got, err)
	}

	// serve with the wrong key refuses to start, naming the problem.
	other := filepath.Join(t.TempDir(), "other.key")
	if err := os.WriteFile(other, make([]byte, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Close()
	environ := serveEnv(t, ns, dir)
	environ["LOOKUP_ENCRYPTION_KEY_FILE"] = other
	var out, errOut testkit.LogBuffer
	err = run(t.Context(), []string{"serve"}, env(environ), &out, &errOut)
	if !errors.Is(err, projector.ErrEncryptionKey) {
		t.Errorf("serve with the wrong key: %v, want ErrEncryptionKey", err)
	}
}

// TestDevTenancy checks that with LOOKUP_TENANT_CLAIM the dev token carries
// the demo businesses and still gets 200s, and so does a token of the
// banner's More tokens command. It also checks that dev logs text by
// default (no LOOKUP_LOG_FORMAT), as its help says.
func TestDevTenancy(t *testing.T) {
	p := start(t, map[string]string{
		"LOOKUP_HTTP_ADDR": "127.0.0.1:0", "LOOKUP_ADMIN_ADDR": "127.0.0.1:0",
		"LOOKUP_TENANT_CLAIM": "business_ids", "LOOKUP_ISSUER": "https://dev.example", "LOOKUP_AUDIENCE": "lookup",
	}, "dev")
	testkit.WaitFor(t, 60*time.Second, func() error {
		if !strings.Contains(p.stdout.String(), "Stop with Ctrl-C.") {
			return fmt.Errorf("no banner yet; stderr:\n%s", p.stderr)
		}
		return nil
	})
	out := p.stdout.String()
	tok := tokenLine.FindStringSubmatch(out)[1]
	claims := testkit.TokenClaims(t, tok)
	d := testDemoData(t)
	if got := fmt.Sprint(claims["business_ids"]); got != fmt.Sprint(d.Businesses) {
		t.Errorf("business_ids = %s, want %v", got, d.Businesses)
	}
	if claims["iss"] != "https://dev.example" {
		t.Errorf("iss = %v", claims["iss"])
	}
	more := moreTokens(t, out)
	for _, c := range curlLine.FindAllStringSubmatch(out, -1)[3:] {
		if code, body, err := get(c[1], tok); err != nil || code != http.StatusOK {
			t.Errorf("GET %s: %d %s %v", c[1], code, body, err)
		}
		if strings.Contains(c[1], "FULL") {
			continue // More tokens mints read:persons only
		}
		if code, body, err := get(c[1], more); err != nil || code != http.StatusOK {
			t.Errorf("More tokens token: GET %s: %d %s %v", c[1], code, body, err)
		}
	}
	if code, body, err := get(curlLine.FindAllStringSubmatch(out, -1)[0][1], more); err != nil || code != http.StatusOK {
		t.Errorf("More tokens token: GET person: %d %s %v", code, body, err)
	}
	if first, _, _ := strings.Cut(p.stderr.String(), "\n"); !strings.HasPrefix(first, "time=") {
		t.Errorf("dev logs are not text by default; first line %q", first)
	}
	// A token for another business is refused (403): tenancy is on.
	key, err := dev.LoadKey(filepath.Join(dataLine.FindStringSubmatch(out)[1], dev.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	foreign, err := dev.Mint(key, dev.TokenRequest{Issuer: "https://dev.example", Audience: "lookup", Subject: "x", Scope: "read:persons",
		TTL: time.Hour, TenantClaim: "business_ids", Tenants: []string{dev.DemoID("business", 99)}, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if code, body, err := get(curlLine.FindAllStringSubmatch(out, -1)[0][1], foreign); err != nil || code != http.StatusForbidden {
		t.Errorf("another tenant's token: %d %s %v, want 403", code, body, err)
	}
}
