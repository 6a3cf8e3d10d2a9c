package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/admin"
	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/settings"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/projector"
)

func TestServe(t *testing.T) {
	ns, js := personsNATS(t)

	// A read model to catch up with before /readyz turns 200: a consumer
	// with five signers and a business contact.
	demoSet := testDemoData(t)
	consumer := events.Consumer{ConsumerID: dev.DemoID("t-consumer", 0), BusinessID: demoSet.Businesses[0], FirstName: "Ada", LastName: "Lovelace"}
	contact := events.BusinessContact{ContactID: dev.DemoID("t-contact", 0), BusinessID: demoSet.Businesses[1], FirstName: "Grace", LastName: "Hopper"}
	data := []any{consumer, contact}
	for k := range 5 {
		data = append(data, dev.DemoSigner(consumer.ConsumerID, 100+k))
	}
	publish(t, js, data...)

	// Requests marked X-Test-Hold wait in the handler chain until release
	// is closed, so that they are in flight when the shutdown starts.
	var holding sync.WaitGroup
	release := make(chan struct{})
	wrapAPI := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Test-Hold") != "" {
				holding.Done()
				<-release
			}
			next.ServeHTTP(w, r)
		})
	}

	dir := filepath.Join(t.TempDir(), "data")
	p := startServe(t, serveEnv(t, ns, dir), serveOptions{wrapAPI: wrapAPI})
	addrs := p.addrs(t)
	api, adminURL := "http://"+addrs["api"], "http://"+addrs["admin"]
	waitReady(t, addrs["admin"])

	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Scope: "read:persons read:persons:ssn"})
	personURL := api + "/api/v1/persons/" + consumer.ConsumerID
	signersURL := api + "/api/v1/authorized-signers?consumer_id=" + consumer.ConsumerID + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL"

	t.Run("get person", func(t *testing.T) {
		code, body, err := get(personURL, tok)
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET person: %d %s %v", code, body, err)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{"person_id": consumer.ConsumerID, "business_id": consumer.BusinessID,
			"first_name": "Ada", "last_name": "Lovelace", "type": "CONSUMER"} {
			if got[k] != want {
				t.Errorf("%s = %v, want %q", k, got[k], want)
			}
		}
	})
	t.Run("get signers", func(t *testing.T) {
		code, body, err := get(signersURL, tok)
		if err != nil || code != http.StatusOK {
			t.Fatalf("GET signers: %d %s %v", code, body, err)
		}
		var got struct {
			Items []map[string]any `json:"items"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got.Items) != 5 {
			t.Fatalf("%d signers, want 5: %s", len(got.Items), body)
		}
		for _, it := range got.Items {
			if _, ok := it["protected_personal_data"]; !ok {
				t.Errorf("signer without protected_personal_data: %v", it)
			}
		}
	})
	t.Run("no token", func(t *testing.T) {
		if code, body, err := get(personURL, ""); err != nil || code != http.StatusUnauthorized {
			t.Errorf("GET without token: %d %s %v, want 401", code, body, err)
		}
	})
	t.Run("live projection", func(t *testing.T) {
		late := events.Consumer{ConsumerID: dev.DemoID("t-consumer", 1), BusinessID: demoSet.Businesses[2], FirstName: "Alan", LastName: "Turing"}
		publish(t, js, late)
		waitOK(t, 20*time.Second, api+"/api/v1/persons/"+late.ConsumerID, tok)
	})
	t.Run("metrics", func(t *testing.T) {
		testkit.WaitFor(t, 10*time.Second, func() error {
			code, body, err := get(adminURL+"/metrics", "")
			if err != nil || code != http.StatusOK {
				return fmt.Errorf("GET /metrics: %d %w", code, err)
			}
			m := string(body)
			for _, want := range []string{
				admin.MetricApplied + " 8", admin.MetricSkipped + " 0", admin.MetricDeadLettered + " 0",
				admin.MetricAppliedSeq + " 8", admin.MetricLag + " 0", admin.MetricCaughtUp + " 1", admin.MetricConnected + " 1",
				admin.MetricStreamLastSeq + " 8", admin.MetricAge + " ",
				`lookup_http_requests_total{`, `lookup_http_request_duration_seconds_bucket{`,
				"go_goroutines ", "process_start_time_seconds ",
			} {
				if !strings.Contains(m, "\n"+want) {
					return fmt.Errorf("metrics lack %q", want)
				}
			}
			return nil
		})
	})

	t.Run("consumer without signers", func(t *testing.T) {
		// Whatever the read model returns for it (ErrNotFound, or the
		// consumer and no signers), the API answers 404.
		lone := events.Consumer{ConsumerID: dev.DemoID("t-consumer", 2), BusinessID: demoSet.Businesses[0], FirstName: "Lone", LastName: "Consumer"}
		publish(t, js, lone)
		waitOK(t, 20*time.Second, api+"/api/v1/persons/"+lone.ConsumerID, tok)
		if code, body, err := get(api+"/api/v1/authorized-signers?consumer_id="+lone.ConsumerID, tok); err != nil || code != http.StatusNotFound {
			t.Errorf("GET signers of a consumer without signers: %d %s %v, want 404", code, body, err)
		}
	})

	// Shutdown during requests: held requests are in their handlers when
	// the shutdown starts and complete after it; load goroutines keep
	// requesting until the listener is gone. No request that the server
	// accepted may fail.
	const held = 4
	holding.Add(held)
	type result struct {
		url  string
		code int
		err  error
	}
	heldResults := make(chan result, held)
	for i := range held {
		url := personURL
		if i%2 == 1 {
			url = signersURL
		}
		go func() {
			req, _ := http.NewRequest(http.MethodGet, url, nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("X-Test-Hold", "1")
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
			if err != nil {
				heldResults <- result{url, 0, err}
				return
			}
			resp.Body.Close()
			heldResults <- result{url, resp.StatusCode, nil}
		}()
	}
	holding.Wait()

	var (
		cancelled atomic.Bool
		wg        sync.WaitGroup
		mu        sync.Mutex
		failures  []string
		oks       atomic.Int64
	)
	client := &http.Client{Timeout: 30 * time.Second}
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			url := personURL
			if i%2 == 1 {
				url = signersURL
			}
			for {
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := client.Do(req)
				if err != nil {
					if !cancelled.Load() {
						mu.Lock()
						failures = append(failures, "before shutdown: "+err.Error())
						mu.Unlock()
					}
					return // the server is gone: refused, as it should be
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					mu.Lock()
					failures = append(failures, fmt.Sprintf("%s: status %d", url, resp.StatusCode))
					mu.Unlock()
					return
				}
				oks.Add(1)
			}
		}()
	}
	testkit.WaitFor(t, 20*time.Second, func() error {
		if n := oks.Load(); n < 40 {
			return fmt.Errorf("%d requests done", n)
		}
		return nil
	})
	cancelled.Store(true)
	p.cancel() // SIGTERM

	// The admin listener reports draining while the API waits for the held
	// requests; then they complete.
	testkit.WaitFor(t, 10*time.Second, func() error {
		code, body, err := get(adminURL+"/readyz", "")
		if err != nil || code != http.StatusServiceUnavailable || !strings.Contains(string(body), `"draining":true`) {
			return fmt.Errorf("readyz while draining: %d %s %w", code, body, err)
		}
		return nil
	})
	close(release)
	for range held {
		r := <-heldResults
		if r.err != nil || r.code != http.StatusOK {
			t.Errorf("request in flight during shutdown %s: %d %v, want 200", r.url, r.code, r.err)
		}
	}
	if err := p.wait(t, 30*time.Second); err != nil {
		t.Fatalf("serve returned %v\nstderr:\n%s", err, p.stderr)
	}
	wg.Wait()
	for _, f := range failures {
		t.Errorf("request failed: %s", f)
	}
	if p.stdout.String() != "" {
		t.Errorf("stdout = %q, want nothing", p.stdout.String())
	}
	for _, secret := range []string{tok, "Bearer"} {
		if strings.Contains(p.stderr.String(), secret) {
			t.Errorf("logs contain %q", secret)
		}
	}

	// The store was closed cleanly and reopens with everything in it.
	s, err := projector.Open(dir, projector.StoreOptions{})
	if err != nil {
		t.Fatalf("reopen store: %v", err)
	}
	defer s.Close()
	if cp := checkpoint(t, s); cp != 9 { // 7 at start, then the late and the lone consumer
		t.Errorf("checkpoint = %d, want 9", cp)
	}
	if _, sg, err := s.Signers(t.Context(), consumer.ConsumerID); err != nil || len(sg) != 5 {
		t.Errorf("signers after reopen: %d, %v; want 5", len(sg), err)
	}
}

func TestServeStartupErrors(t *testing.T) {
	ns := runNATS(t) // no stream on it
	dir := t.TempDir()
	badJWKS := filepath.Join(dir, "bad-jwks.json")
	if err := os.WriteFile(badJWKS, []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	badKey := filepath.Join(dir, "bad.key")
	if err := os.WriteFile(badKey, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	lockedDir := filepath.Join(dir, "locked")
	held, err := projector.Open(lockedDir, projector.StoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()

	tests := []struct {
		name    string
		change  map[string]string // over serveEnv; "" deletes
		wantIs  error
		wantMsg []string
	}{
		{"no JWKS", map[string]string{"LOOKUP_JWKS_FILE": ""}, settings.ErrNoJWKS, []string{"LOOKUP_JWKS_URL", "LOOKUP_JWKS_FILE"}},
		{"two JWKS sources", map[string]string{"LOOKUP_JWKS_URL": "http://127.0.0.1:1/jwks"}, nil, []string{"LOOKUP_JWKS_URL", "LOOKUP_JWKS_FILE"}},
		{"JWKS file missing", map[string]string{"LOOKUP_JWKS_FILE": filepath.Join(dir, "nope.json")}, os.ErrNotExist, []string{"JWKS", "nope.json"}},
		{"JWKS file invalid", map[string]string{"LOOKUP_JWKS_FILE": badJWKS}, nil, []string{"JWKS", "bad-jwks.json"}},
		{"JWKS URL unreachable", map[string]string{"LOOKUP_JWKS_FILE": "", "LOOKUP_JWKS_URL": "http://127.0.0.1:1/jwks"}, nil, []string{"JWKS", "127.0.0.1:1"}},
		{"key file missing", map[string]string{"LOOKUP_ENCRYPTION_KEY_FILE": filepath.Join(dir, "nope.key")}, os.ErrNotExist, []string{"encryption key", "nope.key"}},
		{"key file invalid", map[string]string{"LOOKUP_ENCRYPTION_KEY_FILE": badKey}, nil, []string{"encryption key", "bad.key"}},
		{"missing stream", map[string]string{"LOOKUP_STREAM": "NO_SUCH_STREAM"}, projector.ErrStreamNotFound, []string{"NO_SUCH_STREAM"}},
		{"locked data directory", map[string]string{"LOOKUP_DATA_DIR": lockedDir}, projector.ErrStoreLocked, []string{lockedDir}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := serveEnv(t, ns, filepath.Join(t.TempDir(), "data"))
			for k, v := range tt.change {
				if v == "" {
					delete(environ, k)
				} else {
					environ[k] = v
				}
			}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			var out, errOut testkit.LogBuffer
			err := run(ctx, []string{"serve"}, env(environ), &out, &errOut)
			if err == nil || ctx.Err() != nil {
				t.Fatalf("run = %v (ctx %v), want a start-up error", err, ctx.Err())
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want it to match %v", err, tt.wantIs)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %q, want it to name %q", err, m)
				}
			}
			if errors.Is(err, settings.ErrUsage) {
				t.Errorf("err = %v is a usage error, want exit status 1", err)
			}
		})
	}
}

// TestServeWithoutNATS checks that serve waits, not ready, while NATS is
// unreachable, and becomes ready once NATS and the stream appear.
func TestServeWithoutNATS(t *testing.T) {
	port := freePort(t)
	environ := map[string]string{
		"LOOKUP_HTTP_ADDR":  "127.0.0.1:0",
		"LOOKUP_ADMIN_ADDR": "127.0.0.1:0",
		"LOOKUP_NATS_URL":   fmt.Sprintf("nats://127.0.0.1:%d", port),
		"LOOKUP_DATA_DIR":   t.TempDir(),
		"LOOKUP_JWKS_FILE":  writeJWKS(t),
		"LOOKUP_ISSUER":     testIssuer,
		"LOOKUP_AUDIENCE":   testAudience,
	}
	p := start(t, environ, "serve")
	addrs := p.addrs(t)
	admin := "http://" + addrs["admin"]
	testkit.WaitFor(t, 20*time.Second, func() error {
		if !strings.Contains(p.stderr.String(), "nats unreachable") {
			return errors.New("no log line about NATS being unreachable")
		}
		return nil
	})
	if code, _, err := get(admin+"/livez", ""); err != nil || code != http.StatusOK {
		t.Errorf("livez: %d %v, want 200", code, err)
	}
	if code, body, err := get(admin+"/readyz", ""); err != nil || code != http.StatusServiceUnavailable {
		t.Errorf("readyz: %d %s %v, want 503", code, body, err)
	}
	// Not caught up: the API answers 503 not-ready, not a false 404.
	consumerID := dev.DemoID("t-consumer", 0)
	personURL := "http://" + addrs["api"] + "/api/v1/persons/" + consumerID
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	checkNotReady := func() {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, personURL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var prob struct {
			Type string `json:"type"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&prob); err != nil {
			t.Fatalf("decode: %v", err)
		}
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "5" ||
			prob.Type != "https://lookup.example/problems/not-ready" {
			t.Errorf("GET person before caught up: %d Retry-After %q type %q, want 503, 5, not-ready",
				resp.StatusCode, resp.Header.Get("Retry-After"), prob.Type)
		}
	}
	checkNotReady()

	// NATS comes up on that port, with the stream.
	opts := testkit.NATSOptions(t.TempDir())
	opts.Port = port
	ns := testkit.RunNATS(t, opts)
	js := jetStream(t, ns)
	createStream(t, js, "PERSONS")
	publish(t, js, events.Consumer{ConsumerID: consumerID, BusinessID: dev.DemoID("business", 0), FirstName: "A", LastName: "B"})
	waitReady(t, addrs["admin"])
	// Ready is no promise that the event is applied: serve may have
	// reconnected between the stream's creation and the publish, and been
	// caught up with the empty stream. Wait for the event's position.
	testkit.WaitFor(t, 60*time.Second, func() error {
		if got := metric(t, addrs["admin"], "lookup_projector_applied_sequence"); got != "1" {
			return fmt.Errorf("applied sequence %q, want 1", got)
		}
		return nil
	})
	if code, body, err := get(personURL, tok); err != nil || code != http.StatusOK {
		t.Errorf("GET person once caught up: %d %s %v, want 200", code, body, err)
	}

	p.cancel()
	if err := p.wait(t, 30*time.Second); err != nil {
		t.Fatalf("serve returned %v", err)
	}
}

// secrets are the credentials TestNoSecretInLogs puts into URLs.
var secrets = []string{"s3cr3tT0ken", "s3cret", "token=abc"}

// assertNoSecret fails the test if logs carry any of secrets.
func assertNoSecret(t *testing.T, what, logs string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("%s carries %q:\n%s", what, s, logs)
		}
	}
}

// TestNoSecretInLogs checks that the credentials of a NATS URL (a token
// as its user information) and of a JWKS URL (user:password and a query)
// reach no log line of serve or project, nor a start-up error.
func TestNoSecretInLogs(t *testing.T) {
	jwks, err := dev.PublicJWKS(testKey())
	if err != nil {
		t.Fatal(err)
	}
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	defer idp.Close()
	ns, _, _ := oneConsumerNATS(t)
	natsURL := strings.Replace(ns.ClientURL(), "nats://", "nats://s3cr3tT0ken@", 1)
	jwksURL := strings.Replace(idp.URL, "http://", "http://user:s3cret@", 1) + "/jwks.json?token=abc"

	t.Run("serve", func(t *testing.T) {
		environ := serveEnv(t, ns, t.TempDir())
		delete(environ, "LOOKUP_JWKS_FILE")
		environ["LOOKUP_LOG_FORMAT"] = "text"
		p := start(t, environ, "serve", "--log-format", "json", "--nats-url", natsURL, "--jwks-url", jwksURL)
		waitReady(t, p.addrs(t)["admin"])
		p.cancel()
		if err := p.wait(t, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		logs := p.stderr.String()
		for _, want := range []string{`"msg":"starting lookupd serve"`, `"msg":"nats connected"`, `"jwks_url":"` + idp.URL + `/jwks.json?redacted"`} {
			if !strings.Contains(logs, want) {
				t.Errorf("logs lack %s:\n%s", want, logs)
			}
		}
		assertNoSecret(t, "serve logs", logs)
	})
	t.Run("project", func(t *testing.T) {
		p := start(t, map[string]string{"LOOKUP_DATA_DIR": t.TempDir()}, "project", "--until-caught-up", "--nats-url", natsURL)
		if err := p.wait(t, 60*time.Second); err != nil {
			t.Fatalf("project: %v\nstderr:\n%s", err, p.stderr)
		}
		logs := p.stderr.String()
		if !strings.Contains(logs, `"msg":"nats connected"`) {
			t.Errorf("logs lack the nats connected line:\n%s", logs)
		}
		assertNoSecret(t, "project logs", logs)
	})
	t.Run("malformed NATS URL", func(t *testing.T) {
		p := start(t, map[string]string{"LOOKUP_DATA_DIR": t.TempDir()}, "project", "--nats-url", "nats://s3cr3tT0ken@127.0.0.1:bad?token=abc")
		err := p.wait(t, 30*time.Second)
		if err == nil {
			t.Fatal("project with a malformed NATS URL returned nil")
		}
		assertNoSecret(t, "the start-up error", err.Error())
		assertNoSecret(t, "project logs", p.stderr.String())
	})
	t.Run("unreachable JWKS URL", func(t *testing.T) {
		environ := serveEnv(t, ns, t.TempDir())
		delete(environ, "LOOKUP_JWKS_FILE")
		p := start(t, environ, "serve", "--jwks-url", "http://user:s3cret@127.0.0.1:1/jwks.json?token=abc")
		err := p.wait(t, 30*time.Second)
		if err == nil {
			t.Fatal("serve with an unreachable JWKS URL returned nil")
		}
		assertNoSecret(t, "the start-up error", err.Error())
		assertNoSecret(t, "serve logs", p.stderr.String())
	})
}
