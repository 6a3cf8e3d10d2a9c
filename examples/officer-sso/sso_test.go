//go:build integration

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"
)

// person is whose accounting the officer reads (no record of them is
// needed: the officer's own views are recorded, and shown with self=1).
const person = "6df37b43-73d4-5a12-a069-363901a6758b"

// TestOfficerSignsInThroughTheProxy runs deploy/compose/officer.yaml's
// configuration as processes on this machine: the stand-in identity
// provider (in process), oauth2-proxy v7.15.6 and lookupd audit serve
// (built from source) on a nats-server with JetStream; headless Chromium
// opens the proxy's /officer/person, is sent through the stand-in's login
// page and back, and the page renders for the signed-in officer (whose
// view is recorded with the ID token's sub and azp); the clerk, without
// read:audit, gets a 403. No token is in a page, a URL or a log.
func TestOfficerSignsInThroughTheProxy(t *testing.T) {
	chrome := chromium(t) // before the builds: under CI, missing Chromium fails at once
	bins := build(t)
	natsURL := startNATS(t, bins.natsServer)
	idpLn, proxyLn := listenTCP(t), listenTCP(t)
	idpPort, proxyPort := port(idpLn), port(proxyLn)
	o := readOverlay(t, map[string]string{"OFFICER_IDP_PORT": idpPort, "OFFICER_PROXY_PORT": proxyPort})
	secrets := writeSecrets(t)
	tokens := &tokenLog{}
	startIDP(t, o, idpLn, secrets, tokens)
	lookupd, api := startAuditServe(t, bins.lookupd,
		append(localize(t, o.auditEnv, idpPort, "", secrets), "LOOKUP_NATS_URL="+natsURL), tokens.redact)
	proxy := startProxy(t, bins.oauth2Proxy, localize(t, o.proxyEnv, idpPort, api, secrets), proxyLn, tokens.redact)

	b := newBrowser(t, chrome)
	proxyURL, idpURL := "http://localhost:"+proxyPort, "http://localhost:"+idpPort
	page := proxyURL + "/officer/person?id=" + person + "&self=1"
	var shown []string // the pages' HTML

	t.Run("officer", func(t *testing.T) {
		b.signIn(t, page, idpURL, "officer")
		var text string
		waitFor(t, "the officer's view on the page", 60*time.Second, func() bool {
			b.run(t, b.navigate(page), b.bodyText(&text))
			if st := b.status(page); st != http.StatusOK {
				t.Fatalf("the page answered %d to the officer:\n%s", st, text)
			}
			return strings.Contains(text, "subject officer")
		})
		if !strings.Contains(text, "client lookup-officer") || !strings.Contains(text, "Reads of this accounting are shown") {
			t.Errorf("the page does not show the officer's view with the proxy's client:\n%s", text)
		}
		shown = append(shown, b.html(t))
	})

	t.Run("clerk", func(t *testing.T) {
		b.run(t, b.navigate(proxyURL+"/oauth2/sign_out"))
		b.signIn(t, page, idpURL, "clerk")
		var text string
		b.run(t, b.bodyText(&text))
		if st := b.status(page); st != http.StatusForbidden || !strings.Contains(text, "read:audit") {
			t.Errorf("the clerk got %d, want 403 naming read:audit:\n%s", st, text)
		}
		shown = append(shown, b.html(t))
	})

	// No token in a page, a URL the browser asked for, or a log.
	list := tokens.all()
	if len(list) < 6 { // access, ID and refresh token of each sign-in
		t.Fatalf("the stand-in issued %d tokens, want those of two sign-ins", len(list))
	}
	for where, text := range map[string]string{"a page": strings.Join(shown, "\n"), "a URL": strings.Join(b.urls(), "\n"),
		"lookupd's log": lookupd.out.String(), "oauth2-proxy's log": proxy.out.String()} {
		for _, tok := range list {
			_, rest, _ := strings.Cut(tok, ".") // payload and signature: the header is every token's
			payload, sig, _ := strings.Cut(rest, ".")
			if strings.Contains(text, payload) || strings.Contains(text, sig) {
				t.Errorf("a token is in %s", where)
			}
		}
	}
}

func listenTCP(t *testing.T) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener)
}

func port(ln net.Listener) string {
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// writeSecrets writes the proxy's client and cookie secrets, random, as
// make compose-officer-up does, and returns their folder.
func writeSecrets(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"client-secret", "cookie-secret"} {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(hex.EncodeToString(b)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// localize turns an environment of the overlay into this machine's: the
// containers' names become loopback addresses, the proxy listens on its
// descriptor 3, the secrets are in dir. A name or path left over fails the
// test: the overlay gained a setting this test does not run.
func localize(t *testing.T, env map[string]string, idpPort, lookupdAPI, dir string) []string {
	t.Helper()
	r := strings.NewReplacer("http://officer-idp:9000", "http://127.0.0.1:"+idpPort,
		"http://lookupd-audit:8081", "http://"+lookupdAPI, "0.0.0.0:4180", "fd:3", "/etc/officer/", dir+"/")
	var out []string
	for k, v := range env {
		v = r.Replace(v)
		if strings.Contains(v, "officer-idp") || strings.Contains(v, "lookupd-audit") || strings.HasPrefix(v, "/etc/") {
			t.Fatalf("%s=%s: not a setting this test can run", k, v)
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// startIDP runs the stand-in in process on ln with the overlay's
// command line (its secret file in dir), tokens recording what it issues.
func startIDP(t *testing.T, o overlay, ln net.Listener, dir string, tokens *tokenLog) {
	t.Helper()
	args := strings.Split(strings.ReplaceAll(strings.Join(o.idpArgs, "\x00"), "/etc/officer/", dir+"/"), "\x00")
	cfg, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("the overlay's command line %q: %v", o.idpArgs, err)
	}
	m, err := newProvider(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddMiddleware(tokens.record); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, m, ln, cfg.publicAddr, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// tokenLog records the tokens the stand-in's token endpoint issues.
type tokenLog struct {
	mu     sync.Mutex
	tokens []string
}

func (l *tokenLog) record(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != mockoidc.TokenEndpoint {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body struct {
			Access  string `json:"access_token"`
			ID      string `json:"id_token"`
			Refresh string `json:"refresh_token"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &body) == nil {
			l.mu.Lock()
			for _, tok := range []string{body.Access, body.ID, body.Refresh} {
				if strings.Count(tok, ".") == 2 {
					l.tokens = append(l.tokens, tok)
				}
			}
			l.mu.Unlock()
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

func (l *tokenLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.tokens...)
}

// redact hides the tokens in a log a failed test prints.
func (l *tokenLog) redact(s string) string {
	for _, tok := range l.all() {
		s = strings.ReplaceAll(s, tok, "[token]")
	}
	return s
}
