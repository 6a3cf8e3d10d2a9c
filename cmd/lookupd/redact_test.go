package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
)

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
	jwks, err := publicJWKS(testKey())
	if err != nil {
		t.Fatal(err)
	}
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(jwks)
	}))
	defer idp.Close()
	ns, js := personsNATS(t)
	publish(t, js, events.Consumer{ConsumerID: demoID("u-consumer", 0), BusinessID: demoID("business", 0), FirstName: "A", LastName: "B"})
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
