package main

import (
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// overlayPath is deploy/compose/officer.yaml, from this module's folder.
var overlayPath = filepath.Join("..", "..", "deploy", "compose", "officer.yaml")

// overlay is what the tests read of deploy/compose/officer.yaml, its
// variables (${NAME:-default}) replaced.
type overlay struct {
	idpArgs  []string          // officer-idp's command
	proxyEnv map[string]string // officer-proxy's environment
	auditEnv map[string]string // what it sets in lookupd-audit's environment
}

var composeVar = regexp.MustCompile(`\$\{([A-Z0-9_]+):-([^}]*)\}`)

// readOverlay reads the overlay with the compose variables of vars (the
// defaults of the file for the others).
func readOverlay(t *testing.T, vars map[string]string) overlay {
	t.Helper()
	b, err := os.ReadFile(overlayPath)
	if err != nil {
		t.Fatal(err)
	}
	text := composeVar.ReplaceAllStringFunc(string(b), func(m string) string {
		sub := composeVar.FindStringSubmatch(m)
		if v, ok := vars[sub[1]]; ok {
			return v
		}
		return sub[2]
	})
	type service struct {
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
	}
	var f struct {
		Services map[string]service `yaml:"services"`
	}
	if err := yaml.Unmarshal([]byte(text), &f); err != nil {
		t.Fatalf("%s: %v", overlayPath, err)
	}
	o := overlay{idpArgs: f.Services["officer-idp"].Command, proxyEnv: f.Services["officer-proxy"].Environment,
		auditEnv: f.Services["lookupd-audit"].Environment}
	if o.idpArgs == nil || o.proxyEnv == nil || o.auditEnv == nil {
		t.Fatalf("%s lacks the services officer-idp (command), officer-proxy or lookupd-audit (environment)", overlayPath)
	}
	return o
}

// arg returns the value after flag in args ("" if none).
func arg(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestOverlayAgrees holds the three services of the overlay to one
// configuration: the proxy's client is the stand-in's and lookupd's
// audience, the issuer is the stand-in's, and the proxy and lookupd fetch
// the stand-in's key set where it listens.
func TestOverlayAgrees(t *testing.T) {
	o := readOverlay(t, nil)
	p, a := o.proxyEnv, o.auditEnv
	issuer := "http://" + arg(o.idpArgs, "--public-addr") + "/oidc"
	_, port, _ := strings.Cut(arg(o.idpArgs, "--listen"), ":")
	inside := "http://officer-idp:" + port + "/oidc"
	for _, c := range []struct{ what, got, want string }{
		{"proxy's client id", p["OAUTH2_PROXY_CLIENT_ID"], arg(o.idpArgs, "--client-id")},
		{"lookupd's audience", a["LOOKUP_AUDIENCE"], arg(o.idpArgs, "--client-id")},
		{"proxy's client secret file", p["OAUTH2_PROXY_CLIENT_SECRET_FILE"], arg(o.idpArgs, "--client-secret-file")},
		{"proxy's issuer", p["OAUTH2_PROXY_OIDC_ISSUER_URL"], issuer},
		{"lookupd's issuer", a["LOOKUP_ISSUER"], issuer},
		{"proxy's login URL", p["OAUTH2_PROXY_LOGIN_URL"], issuer + "/authorize"},
		{"proxy's token URL", p["OAUTH2_PROXY_REDEEM_URL"], inside + "/token"},
		{"proxy's JWKS URL", p["OAUTH2_PROXY_OIDC_JWKS_URL"], inside + "/.well-known/jwks.json"},
		{"lookupd's JWKS URL", a["LOOKUP_JWKS_URL"], inside + "/.well-known/jwks.json"},
		{"lookupd's JWKS file", a["LOOKUP_JWKS_FILE"], ""},
		{"the token forwarded", p["OAUTH2_PROXY_PASS_AUTHORIZATION_HEADER"], "true"},
		{"proxy's provider", p["OAUTH2_PROXY_PROVIDER"], "oidc"},
		{"proxy's discovery", p["OAUTH2_PROXY_SKIP_OIDC_DISCOVERY"], "true"},
		{"proxy's upstream", p["OAUTH2_PROXY_UPSTREAMS"], "http://lookupd-audit:8081/officer/"},
	} {
		if c.got != c.want || (c.want == "" && c.what != "lookupd's JWKS file") {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	if u, err := url.Parse(p["OAUTH2_PROXY_REDIRECT_URL"]); err != nil || u.Host != "localhost:4180" || u.Path != "/oauth2/callback" {
		t.Errorf("proxy's redirect URL %q: want the proxy's published port and /oauth2/callback", p["OAUTH2_PROXY_REDIRECT_URL"])
	}
	if _, hasSecret := p["OAUTH2_PROXY_CLIENT_SECRET"]; hasSecret || p["OAUTH2_PROXY_COOKIE_SECRET"] != "" {
		t.Error("a secret is written in the overlay: give it as a file")
	}
}
