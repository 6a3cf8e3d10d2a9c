package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/testing/testkit"
)

var (
	tokenLine = regexp.MustCompile(`(?m)^export TOKEN='([^']+)'$`)
	curlLine  = regexp.MustCompile(`(?m)^  curl -s -H "Authorization: Bearer \$TOKEN" '?([^'\s]+)'?$`)
	dataLine  = regexp.MustCompile(`(?m)^  data    (\S+) \(removed on exit\)$`)
	moreLine  = regexp.MustCompile(`(?m)^More tokens this server accepts, from the repository:\n  (.+)$`)
	toolLine  = regexp.MustCompile(`(?m)^  go run \./cmd/lookupd ((?:audit|dlq) .+)$`)
	readyLine = regexp.MustCompile(`(?m)^  curl -s (\S+/readyz)$`)
)

// moreTokens runs the banner's "More tokens" command through run, with
// an empty environment, and returns the token it prints.
func moreTokens(t *testing.T, banner string) string {
	t.Helper()
	return moreTokensIn(t, banner, nil)
}

// moreTokensIn is moreTokens in the environment environ.
func moreTokensIn(t *testing.T, banner string, environ map[string]string) string {
	t.Helper()
	m := moreLine.FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no More tokens command in:\n%s", banner)
	}
	words, err := testkit.ShellSplit(m[1])
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "go run ./cmd/lookupd token "
	if !strings.HasPrefix(strings.Join(words, " "), prefix) {
		t.Fatalf("More tokens command %q does not start with %q", m[1], prefix)
	}
	var out, errOut testkit.LogBuffer
	if err := run(t.Context(), words[3:], env(environ), &out, &errOut); err != nil {
		t.Fatalf("%s: %v\n%s", m[1], err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

// checkBannerTools runs the banner's audit and dlq commands, verbatim but
// for "go run ./cmd/lookupd", and its readiness curl, against the dev
// server that printed it: the audit of a signer whose protected data the
// banner's requests disclosed lists records, and the DLQ is empty.
func checkBannerTools(t *testing.T, banner string) {
	t.Helper()
	lines := toolLine.FindAllStringSubmatch(banner, -1)
	if len(lines) != 2 {
		t.Fatalf("%d audit and dlq commands in the banner, want 2:\n%s", len(lines), banner)
	}
	for _, l := range lines {
		words, err := testkit.ShellSplit(l[1])
		if err != nil {
			t.Fatal(err)
		}
		var out, errOut testkit.LogBuffer
		if err := run(t.Context(), words, env(nil), &out, &errOut); err != nil {
			t.Fatalf("%s: %v\n%s", l[1], err, errOut.String())
		}
		switch words[0] {
		case "audit":
			if !strings.Contains(out.String(), `"request_id"`) {
				t.Errorf("%s: stdout %q, stderr %q; want the records of the disclosures above", l[1], out.String(), errOut.String())
			}
		case "dlq":
			if !strings.Contains(out.String(), "0 dead letter(s)") {
				t.Errorf("%s: %q, want an empty dead-letter stream", l[1], out.String())
			}
		}
	}
	m := readyLine.FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no readiness curl in:\n%s", banner)
	}
	if code, body, err := get(m[1], ""); err != nil || code != http.StatusOK {
		t.Errorf("GET %s: %d %s %v, want 200", m[1], code, body, err)
	}
}

func TestDev(t *testing.T) {
	home := map[string]string{"HOME": t.TempDir()} // the per-user dev key goes there
	p := start(t, map[string]string{
		"LOOKUP_HTTP_ADDR":  "127.0.0.1:0",
		"LOOKUP_ADMIN_ADDR": "127.0.0.1:0",
		"LOOKUP_LOG_FORMAT": "json",
		"HOME":              home["HOME"],
	}, "dev")
	var out string
	testkit.WaitFor(t, 60*time.Second, func() error {
		out = p.stdout.String()
		if !strings.Contains(out, "Stop with Ctrl-C.") {
			select {
			case err := <-p.done:
				p.done <- err
				t.Fatalf("dev ended: %v\nstderr:\n%s", err, p.stderr)
			default:
			}
			return errors.New("no banner yet")
		}
		return nil
	})
	m := tokenLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no token line in:\n%s", out)
	}
	tok := m[1]
	curls := curlLine.FindAllStringSubmatch(out, -1)
	if len(curls) != 6 {
		t.Fatalf("%d curl commands, want 6:\n%s", len(curls), out)
	}
	// The printed commands in order: consumer, business contact, deleted
	// consumer, then signers without expand, with expand, with FULL SSNs.
	wantCodes := []int{200, 200, 404, 200, 200, 200}
	bodies := make([][]byte, len(curls))
	for i, c := range curls {
		code, body, err := get(c[1], tok)
		if err != nil || code != wantCodes[i] {
			t.Errorf("GET %s: %d %s %v, want %d", c[1], code, body, err, wantCodes[i])
		}
		bodies[i] = body
	}
	var signers struct {
		Items []struct {
			PPD *struct {
				SSN string `json:"social_security_number"`
			} `json:"protected_personal_data"`
		} `json:"items"`
	}
	if err := json.Unmarshal(bodies[5], &signers); err != nil {
		t.Fatalf("signers: %v: %s", err, bodies[5])
	}
	if len(signers.Items) != 8 {
		t.Errorf("%d signers of the example consumer, want 8", len(signers.Items))
	}
	fullSSN := regexp.MustCompile(`^\d{3}-\d{2}-\d{4}$`)
	var full int
	for _, it := range signers.Items {
		if it.PPD == nil {
			t.Errorf("signer without protected_personal_data")
		} else if fullSSN.MatchString(it.PPD.SSN) {
			full++
		}
	}
	if full == 0 {
		t.Errorf("no full SSN with ssn_mode=FULL: %s", bodies[5])
	}

	// The admin listener serves the dev JWKS.
	addrs := p.addrs(t)
	code, body, err := get("http://"+addrs["admin"]+"/.well-known/jwks.json", "")
	if err != nil || code != http.StatusOK || !strings.Contains(string(body), `"kty": "RSA"`) {
		t.Errorf("GET jwks: %d %s %v", code, body, err)
	}
	if strings.Contains(p.stderr.String(), tok) {
		t.Errorf("the token reached the logs")
	}
	// The banner's More tokens command is the README's, and mints a token
	// this server accepts.
	if !strings.Contains(out, "\n  "+dev.READMETokenCommand+"\n") {
		t.Errorf("the banner's token command is not %q:\n%s", dev.READMETokenCommand, out)
	}
	if code, body, err := get(curls[0][1], moreTokensIn(t, out, home)); err != nil || code != http.StatusOK {
		t.Errorf("More tokens token: GET %s: %d %s %v, want 200", curls[0][1], code, body, err)
	}
	checkBannerTools(t, out)

	dm := dataLine.FindStringSubmatch(out)
	if dm == nil {
		t.Fatalf("no data line in:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home["HOME"], ".cache", "lookupd", dev.KeyFile)); err != nil {
		t.Errorf("per-user dev key: %v", err)
	}
	p.cancel() // Ctrl-C
	if err := p.wait(t, 30*time.Second); err != nil {
		t.Fatalf("dev returned %v\nstderr:\n%s", err, p.stderr)
	}
	if _, err := os.Stat(dm[1]); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary data directory %s still there: %v", dm[1], err)
	}
}

// TestDevDataDirSurvives checks that with --data-dir a second dev run
// reuses the stream, the read model and the key, and publishes nothing again.
func TestDevDataDirSurvives(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dev")
	environ := map[string]string{"LOOKUP_HTTP_ADDR": "127.0.0.1:0", "LOOKUP_ADMIN_ADDR": "127.0.0.1:0", "LOOKUP_LOG_FORMAT": "json"}
	var tokens []string
	for i := range 2 {
		p := start(t, environ, "dev", "--data-dir", dir)
		testkit.WaitFor(t, 60*time.Second, func() error {
			if !strings.Contains(p.stdout.String(), "Stop with Ctrl-C.") {
				return fmt.Errorf("run %d: no banner yet; stderr:\n%s", i, p.stderr)
			}
			return nil
		})
		tokens = append(tokens, tokenLine.FindStringSubmatch(p.stdout.String())[1])
		if i == 1 {
			if !strings.Contains(p.stderr.String(), "demo data not published again") {
				t.Errorf("second run published the demo data again:\n%s", p.stderr)
			}
			// A token of the first run still verifies: same key.
			curls := curlLine.FindAllStringSubmatch(p.stdout.String(), -1)
			if code, body, err := get(curls[0][1], tokens[0]); err != nil || code != http.StatusOK {
				t.Errorf("first run's token on the second run: %d %s %v", code, body, err)
			}
		}
		p.cancel()
		if err := p.wait(t, 30*time.Second); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, dev.KeyFile)); err != nil {
		t.Errorf("data dir not kept: %v", err)
	}
}

// TestTokenDefaultsToDevKey checks that "lookupd token" without --key
// signs with the key "lookupd dev" uses, so that its tokens are accepted:
// the per-user key without --data-dir, the data directory's with it.
func TestTokenDefaultsToDevKey(t *testing.T) {
	home := t.TempDir()
	dataDir := filepath.Join(t.TempDir(), "dev")
	tests := []struct {
		name      string
		devArgs   []string
		tokenArgs []string
		tokenEnv  map[string]string
	}{
		{"temporary data dir: the per-user key", []string{"dev"}, []string{"token"}, map[string]string{"HOME": home}},
		{"--data-dir: its key", []string{"dev", "--data-dir", dataDir}, []string{"token", "--data-dir", dataDir}, map[string]string{"HOME": home}},
		{"--data-dir: its key, through LOOKUP_DATA_DIR", []string{"dev", "--data-dir", dataDir}, []string{"token"}, map[string]string{"HOME": home, "LOOKUP_DATA_DIR": dataDir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := start(t, map[string]string{"HOME": home, "LOOKUP_HTTP_ADDR": "127.0.0.1:0", "LOOKUP_ADMIN_ADDR": "127.0.0.1:0"}, tt.devArgs...)
			testkit.WaitFor(t, 60*time.Second, func() error {
				if !strings.Contains(p.stdout.String(), "Stop with Ctrl-C.") {
					return fmt.Errorf("no banner yet; stderr:\n%s", p.stderr)
				}
				return nil
			})
			var out, errOut testkit.LogBuffer
			if err := run(t.Context(), tt.tokenArgs, env(tt.tokenEnv), &out, &errOut); err != nil {
				t.Fatalf("token: %v (stderr %q)", err, errOut.String())
			}
			curls := curlLine.FindAllStringSubmatch(p.stdout.String(), -1)
			if len(curls) == 0 {
				t.Fatalf("no curl lines in:\n%s", p.stdout)
			}
			if code, body, err := get(curls[0][1], strings.TrimSpace(out.String())); err != nil || code != http.StatusOK {
				t.Errorf("GET %s with the default token: %d %s %v, want 200", curls[0][1], code, body, err)
			}
			p.cancel()
			if err := p.wait(t, 30*time.Second); err != nil {
				t.Fatalf("dev: %v", err)
			}
		})
	}
}
