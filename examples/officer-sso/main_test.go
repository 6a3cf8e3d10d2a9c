package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

const testSecret = "0123456789abcdef-dev-only"

// provider is a stand-in started for a test.
type provider struct {
	m      *mockoidc.MockOIDC
	base   string // its URL on the listener
	issuer string
}

func startProvider(t *testing.T) provider {
	t.Helper()
	m, err := newProvider(config{clientID: "lookup-officer", clientSecret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, m, ln, "localhost:"+port, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return provider{m: m, base: "http://" + ln.Addr().String(), issuer: "http://localhost:" + port + "/oidc"}
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

const verifier = "a-code-verifier-of-at-least-43-characters-0123456789"

// answer is what an authorization request got.
type answer struct {
	status   int
	location string
	body     string
}

// authorize sends an authorization request as the proxy's redirect does,
// with login set (none: "") and the client id given.
func authorize(t *testing.T, p provider, clientID, login string) answer {
	t.Helper()
	sum := sha256.Sum256([]byte(verifier))
	q := url.Values{"client_id": {clientID}, "redirect_uri": {"http://localhost:4180/oauth2/callback"},
		"response_type": {"code"}, "scope": {"openid email profile"}, "state": {"st"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}}
	if login != "" {
		q.Set("login", login)
	}
	resp, err := noRedirect.Get(p.base + mockoidc.AuthorizationEndpoint + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Location"), string(body)}
}

// signIn signs login in and returns the claims of the ID token the
// token endpoint gives for the code.
func signIn(t *testing.T, p provider, login string) jwt.MapClaims {
	t.Helper()
	a := authorize(t, p, "lookup-officer", login)
	loc, err := url.Parse(a.location)
	if a.status != http.StatusFound || err != nil || loc.Query().Get("state") != "st" {
		t.Fatalf("authorize as %s: %d, Location %q", login, a.status, a.location)
	}
	tr, err := http.PostForm(p.base+mockoidc.TokenEndpoint, url.Values{"grant_type": {"authorization_code"},
		"code": {loc.Query().Get("code")}, "client_id": {"lookup-officer"}, "client_secret": {testSecret},
		"redirect_uri": {"http://localhost:4180/oauth2/callback"}, "code_verifier": {verifier}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Body.Close()
	var body struct {
		IDToken string `json:"id_token"`
	}
	if err := json.NewDecoder(tr.Body).Decode(&body); err != nil || tr.StatusCode != http.StatusOK {
		t.Fatalf("token: %s, %v", tr.Status, err)
	}
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(body.IDToken, claims, func(*jwt.Token) (any, error) { return p.m.Keypair.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(p.issuer), jwt.WithAudience("lookup-officer"))
	if err != nil {
		t.Fatalf("ID token of %s: %v", login, err)
	}
	return claims
}

func scp(c jwt.MapClaims) []string {
	list, _ := c["scp"].([]any)
	var out []string
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}

func TestTheOfficerHasReadAuditAndTheClerkNot(t *testing.T) {
	p := startProvider(t)
	officer := signIn(t, p, "officer")
	if got := scp(officer); !slices.Equal(got, []string{"read:audit"}) || officer["sub"] != "officer" || officer["azp"] != "lookup-officer" {
		t.Errorf("officer's ID token: sub %v, azp %v, scp %v", officer["sub"], officer["azp"], got)
	}
	clerk := signIn(t, p, "clerk")
	if got := scp(clerk); len(got) != 0 || clerk["sub"] != "clerk" {
		t.Errorf("clerk's ID token: sub %v, scp %v, want no scope", clerk["sub"], got)
	}
}

func TestTheLoginPageOffersTheUsers(t *testing.T) {
	p := startProvider(t)
	a := authorize(t, p, "lookup-officer", "")
	for _, want := range []string{`value="officer"`, `value="clerk"`, `name="state" value="st"`, "never production"} {
		if a.status != http.StatusOK || !strings.Contains(a.body, want) {
			t.Errorf("login page (%d) lacks %s:\n%s", a.status, want, a.body)
		}
	}
	if r := authorize(t, p, "lookup-officer", "nobody"); r.status != http.StatusBadRequest {
		t.Errorf("an unknown user: %d, want 400", r.status)
	}
	// A request mockoidc refuses leaves nobody queued for the next login.
	if r := authorize(t, p, "another-client", "clerk"); r.status != http.StatusUnauthorized {
		t.Errorf("another client: %d, want 401", r.status)
	}
	if c := signIn(t, p, "officer"); c["sub"] != "officer" {
		t.Errorf("after a refused clerk, the officer's login signed in %v", c["sub"])
	}
}

func TestFlags(t *testing.T) {
	dir := t.TempDir()
	good, short := filepath.Join(dir, "good"), filepath.Join(dir, "short")
	if err := os.WriteFile(good, []byte(testSecret), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(short, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseFlags([]string{"--listen", ":9000", "--public-addr", "localhost:9000", "--client-secret-file", good}, io.Discard)
	if err != nil || cfg.clientSecret != testSecret || cfg.clientID != "lookup-officer" || cfg.publicAddr != "localhost:9000" {
		t.Errorf("parseFlags: %+v, %v", cfg, err)
	}
	for _, args := range [][]string{{}, {"--client-secret-file", short}, {"--client-secret-file", filepath.Join(dir, "none")},
		{"--client-secret-file", good, "extra"}} {
		if _, err := parseFlags(args, io.Discard); err == nil {
			t.Errorf("parseFlags(%q) accepted", args)
		}
	}
}
