package main

import (
	"context"
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

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/loadtest"
	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/shellquote"
	"github.com/lookup/persons/internal/wait"
)

var (
	tokenLine = regexp.MustCompile(`(?m)^export TOKEN='([^']+)'$`)
	curlLine  = regexp.MustCompile(`(?m)^  curl -s -H "Authorization: Bearer \$TOKEN" '?([^'\s]+)'?$`)
	dataLine  = regexp.MustCompile(`(?m)^  data    (\S+) \(removed on exit\)$`)
	moreLine  = regexp.MustCompile(`(?m)^More tokens this server accepts, from the repository:\n  (.+)$`)
)

// moreTokens runs the banner's "More tokens" command through run, with
// an empty environment, and returns the token it prints.
func moreTokens(t *testing.T, banner string) string {
	t.Helper()
	m := moreLine.FindStringSubmatch(banner)
	if m == nil {
		t.Fatalf("no More tokens command in:\n%s", banner)
	}
	words, err := shellquote.Split(m[1])
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "go run ./cmd/lookupd token "
	if !strings.HasPrefix(strings.Join(words, " "), prefix) {
		t.Fatalf("More tokens command %q does not start with %q", m[1], prefix)
	}
	var out, errOut logtest.Buffer
	if err := run(context.Background(), words[3:], env(nil), &out, &errOut); err != nil {
		t.Fatalf("%s: %v\n%s", m[1], err, errOut.String())
	}
	return strings.TrimSpace(out.String())
}

func TestDev(t *testing.T) {
	p := start(t, map[string]string{
		"LOOKUP_HTTP_ADDR":  "127.0.0.1:0",
		"LOOKUP_ADMIN_ADDR": "127.0.0.1:0",
		"LOOKUP_LOG_FORMAT": "json",
	}, "dev")
	var out string
	wait.For(t, 60*time.Second, func() error {
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
	// The banner's More tokens command mints a token this server accepts.
	if code, body, err := get(curls[0][1], moreTokens(t, out)); err != nil || code != http.StatusOK {
		t.Errorf("More tokens token: GET %s: %d %s %v, want 200", curls[0][1], code, body, err)
	}

	dm := dataLine.FindStringSubmatch(out)
	if dm == nil {
		t.Fatalf("no data line in:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dm[1], devKeyFile)); err != nil {
		t.Errorf("dev key: %v", err)
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
		wait.For(t, 60*time.Second, func() error {
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
	if _, err := os.Stat(filepath.Join(dir, devKeyFile)); err != nil {
		t.Errorf("data dir not kept: %v", err)
	}
}

func TestDemoData(t *testing.T) {
	d := testDemoData(t)
	var (
		consumers, contacts                            = map[string]bool{}, map[string]bool{}
		statuses                                       = map[events.SignerStatus]bool{}
		types                                          = map[events.SignerType]bool{}
		access                                         = map[events.AccountAccess]bool{}
		mid, noMid, addr, noAddr, ph, noPh, ssn, noSSN int
		dob, noDOB, deletes                            int
	)
	ids := map[string]bool{}
	for _, ev := range d.Events {
		// Every demo event is valid under the v1 contract.
		body, err := events.Encode(ev)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if _, err := events.Decode(ev.Subject(), body); err != nil {
			t.Errorf("demo event %s %s invalid: %v", ev.Type, ev.Subject(), err)
		}
		if ids[ev.ID] {
			t.Errorf("duplicate event id %s", ev.ID)
		}
		ids[ev.ID] = true
		switch x := ev.Data.(type) {
		case events.Consumer:
			consumers[x.ConsumerID] = true
		case events.BusinessContact:
			contacts[x.ContactID] = true
		case events.Signer:
			statuses[x.Status], types[x.Type], access[x.AccountAccess] = true, true, true
			count := func(has bool, yes, no *int) {
				if has {
					*yes++
				} else {
					*no++
				}
			}
			count(x.MiddleName != "", &mid, &noMid)
			count(x.Address != nil, &addr, &noAddr)
			count(x.Phone != nil, &ph, &noPh)
			count(x.SSN != "", &ssn, &noSSN)
			count(x.DateOfBirth != "", &dob, &noDOB)
		default:
			deletes++
		}
	}
	if len(consumers) != 20 || len(contacts) < 3 || len(d.Businesses) < 2 {
		t.Errorf("%d consumers, %d contacts, %d businesses; want 20, >=3, >=2", len(consumers), len(contacts), len(d.Businesses))
	}
	if len(statuses) != 4 || len(types) != 6 || len(access) != 4 {
		t.Errorf("signers cover %d statuses, %d types, %d access levels; want 4, 6, 4", len(statuses), len(types), len(access))
	}
	for name, n := range map[string]int{"middle name": mid, "no middle name": noMid, "address": addr, "no address": noAddr,
		"phone": ph, "no phone": noPh, "SSN": ssn, "no SSN": noSSN, "DOB": dob, "no DOB": noDOB, "deletions": deletes} {
		if n == 0 {
			t.Errorf("no signer (or event) with %s", name)
		}
	}
	again := testDemoData(t)
	if again.Events[0].ID != d.Events[0].ID || again.Consumer != d.Consumer {
		t.Errorf("demo ids are not deterministic")
	}
}

func TestDevKeyPath(t *testing.T) {
	tests := []struct {
		name    string
		environ map[string]string
		dataDir string
		given   bool
		want    string
	}{
		{"data dir given", map[string]string{"HOME": "/home/a"}, "/d", true, "/d/dev-key.pem"},
		{"per-user key under HOME", map[string]string{"HOME": "/home/a"}, "/tmp/x", false, "/home/a/.cache/lookupd/dev-key.pem"},
		{"per-user key under XDG_CACHE_HOME", map[string]string{"HOME": "/home/a", "XDG_CACHE_HOME": "/c"}, "/tmp/x", false, "/c/lookupd/dev-key.pem"},
		{"relative XDG_CACHE_HOME ignored", map[string]string{"HOME": "/home/a", "XDG_CACHE_HOME": "c"}, "/tmp/x", false, "/home/a/.cache/lookupd/dev-key.pem"},
		{"no home: the data dir", nil, "/tmp/x", false, "/tmp/x/dev-key.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := devKeyPath(env(tt.environ), tt.dataDir, tt.given); got != tt.want {
				t.Errorf("devKeyPath = %q, want %q", got, tt.want)
			}
		})
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
			wait.For(t, 60*time.Second, func() error {
				if !strings.Contains(p.stdout.String(), "Stop with Ctrl-C.") {
					return fmt.Errorf("no banner yet; stderr:\n%s", p.stderr)
				}
				return nil
			})
			var out, errOut logtest.Buffer
			if err := run(context.Background(), tt.tokenArgs, env(tt.tokenEnv), &out, &errOut); err != nil {
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

// TestLoadtestParsesDevBanner keeps "make loadtest" (loadtest),
// which reads the banner of "lookupd dev" for its addresses and key, in
// step with the banner.
func TestLoadtestParsesDevBanner(t *testing.T) {
	demo := testDemoData(t)
	tests := []struct {
		name    string
		keyPath string
	}{
		{"plain key path", "/tmp/lookupd-loadtest-1/dev/dev-key.pem"},
		{"key path that needs quoting", "/tmp/it's a dir/dev-key.pem"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config{Stream: "PERSONS"}
			var out strings.Builder
			printDevBanner(&out, devBanner{
				API: httpURL("127.0.0.1:41234"), Admin: httpURL("127.0.0.1:41235"), NATS: "nats://127.0.0.1:41236",
				Stream: cfg.Stream, DataDir: "/tmp/d", Temp: false, KeyPath: tt.keyPath, Token: "aaa.bbb.ccc",
				TTL: time.Hour, Demo: demo, MoreTokens: moreTokensCommand(tt.keyPath, cfg, nil),
			})
			got, err := loadtest.ParseBanner(strings.NewReader(out.String()))
			if err != nil {
				t.Fatalf("ParseBanner: %v", err)
			}
			want := loadtest.Banner{API: "http://127.0.0.1:41234", Admin: "http://127.0.0.1:41235",
				NATS: "nats://127.0.0.1:41236", Stream: "PERSONS", KeyPath: tt.keyPath}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
