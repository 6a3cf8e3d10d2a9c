//go:build integration

package integration

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"

	"github.com/lookup/persons/events"
)

// secretsOfFixture are the SSN (as published and as normalised) and the
// date of birth of the fixture's signer.
var secretsOfFixture = []string{"123-45-6789", "123456789", "1791-12-26"}

// TestSecureNATS runs the secure NATS of deploy/ (deploy/k8s/nats/nats.conf
// with deploy/nats/auth.conf, three nodes, secrets made by
// deploy/gen-secrets.sh): TLS for clients and routes, users with least
// privilege, no anonymous access, JetStream encrypted at rest.
func TestSecureNATS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := genSecrets(t)
	nw, ctrs, urls := startSecureCluster(ctx, t, s, 3)

	_, _, adminJS := jetStreamAs(t, s, urls, "admin", nats.CustomInboxPrefix(adminInboxPrefix), nats.RetryOnFailedConnect(true))
	createStreams(ctx, t, adminJS, "persons.r3.json", "persons_dlq.r3.json", "persons_audit.r3.json")

	pub, pubErrs, pubJS := jetStreamAs(t, s, urls, "publisher")
	f := newFixture(t)
	last := publishAll(ctx, t, pubJS, f.events)

	t.Run("connections without valid credentials are refused", func(t *testing.T) {
		checkRefused(t, s, urls)
	})
	t.Run("the publisher may publish persons.> only and read nothing", func(t *testing.T) {
		checkPublisherDenied(ctx, t, pub, pubErrs)
	})
	t.Run("lookupd reads PERSONS and writes what it owns, nothing else", func(t *testing.T) {
		checkLookupdUser(ctx, t, s, urls, len(f.events), last)
	})
	t.Run("no SSN or date of birth in the store files", func(t *testing.T) {
		checkStoreEncrypted(ctx, t, f.events, ctrs)
	})
	t.Run("lookupd with its credentials over TLS projects and serves", func(t *testing.T) {
		checkLookupdSecure(ctx, t, s, nw, f, last)
	})
}

// checkRefused: anonymous, plain-text, certificate-less and wrong-password
// connections all fail, with an authorization error where credentials are wrong.
func checkRefused(t *testing.T, s *secrets, urls []string) {
	tests := []struct {
		name      string
		connect   func() error
		wantAuthZ bool // the error is nats.ErrAuthorization
	}{
		{"anonymous with a client certificate", func() error {
			_, _, err := connectSecure(t, urls[:1], s.tlsConfig(t, "publisher"), "", "", nats.MaxReconnects(0))
			return err
		}, true},
		{"wrong password", func() error {
			_, _, err := connectSecure(t, urls[:1], s.tlsConfig(t, "admin"), "admin", "not-the-password", nats.MaxReconnects(0))
			return err
		}, true},
		{"another user's password", func() error {
			_, _, err := connectSecure(t, urls[:1], s.tlsConfig(t, "lookupd"), "lookupd", s.password(t, "publisher"), nats.MaxReconnects(0))
			return err
		}, true},
		{"no client certificate", func() error {
			_, _, err := connectSecure(t, urls[:1], s.tlsConfig(t, ""), "admin", s.password(t, "admin"), nats.MaxReconnects(0))
			return err
		}, false},
		{"no TLS", func() error {
			nc, err := nats.Connect("nats://"+urls[0][len("tls://"):], nats.UserInfo("admin", s.password(t, "admin")))
			if err == nil {
				nc.Close()
			}
			return err
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.connect()
			if err == nil {
				t.Fatal("connected, want refused")
			}
			if got := errors.Is(err, nats.ErrAuthorization); got != tt.wantAuthZ {
				t.Errorf("error %q: is authorization violation = %v, want %v", err, got, tt.wantAuthZ)
			}
		})
	}
}

// denied publishes data to subject (a JetStream API request, an event)
// and expects the server to drop it with a permission violation.
func denied(t *testing.T, nc *nats.Conn, ae asyncErrors, subject string, data []byte) {
	t.Helper()
	if err := nc.PublishRequest(subject, nc.NewRespInbox(), data); err != nil {
		t.Fatalf("publish %s: %v", subject, err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := ae.waitPermissionViolation(subject); err != nil {
		t.Error(err)
	}
}

// deniedSubscribe subscribes nc to subject and expects the server's
// permission violation.
func deniedSubscribe(t *testing.T, nc *nats.Conn, ae asyncErrors, subject string) {
	t.Helper()
	if _, err := nc.SubscribeSync(subject); err != nil {
		t.Fatal(err)
	}
	if err := ae.waitPermissionViolation(subject); err != nil {
		t.Error(err)
	}
}

func checkPublisherDenied(ctx context.Context, t *testing.T, nc *nats.Conn, ae asyncErrors) {
	// What the publisher may do works (events were published above through
	// events.Publisher); everything else below is refused.
	tests := []struct {
		name, subject, data string
	}{
		{"publish outside persons.>", "people.x", "{}"},
		{"publish to the DLQ", "dlq.persons.x", "{}"},
		{"publish to the audit stream", "audit.replicas.x", "{}"},
		{"PERSONS stream info", "$JS.API.STREAM.INFO.PERSONS", ""},
		{"PERSONS consumer create", "$JS.API.CONSUMER.CREATE.PERSONS", `{"stream_name":"PERSONS","config":{"ack_policy":"none"}}`},
		{"PERSONS message get", "$JS.API.STREAM.MSG.GET.PERSONS", `{"seq":1}`},
		{"PERSONS direct get", "$JS.API.DIRECT.GET.PERSONS", `{"seq":1}`},
		{"PERSONS_DLQ consumer create", "$JS.API.CONSUMER.CREATE.PERSONS_DLQ", `{"stream_name":"PERSONS_DLQ","config":{"ack_policy":"none"}}`},
		{"PERSONS_DLQ message get", "$JS.API.STREAM.MSG.GET.PERSONS_DLQ", `{"seq":1}`},
		{"PERSONS_AUDIT consumer create", "$JS.API.CONSUMER.CREATE.PERSONS_AUDIT", `{"stream_name":"PERSONS_AUDIT","config":{"ack_policy":"none"}}`},
		{"PERSONS_AUDIT message get", "$JS.API.STREAM.MSG.GET.PERSONS_AUDIT", `{"seq":1}`},
		{"PERSONS delete", "$JS.API.STREAM.DELETE.PERSONS", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			denied(t, nc, ae, tt.subject, []byte(tt.data))
		})
	}
	t.Run("subscribe to persons.>", func(t *testing.T) {
		deniedSubscribe(t, nc, ae, "persons.>")
	})
	t.Run("subscribe to lookupd's inbox", func(t *testing.T) {
		deniedSubscribe(t, nc, ae, lookupdInboxPrefix+".>")
	})
	t.Run("the JetStream client cannot open PERSONS", func(t *testing.T) {
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := js.Stream(cctx, "PERSONS"); err == nil {
			t.Error("publisher opened stream PERSONS")
		}
	})
}

// checkStoreEncrypted greps the JetStream store files of every node for
// the fixture's SSN and date of birth. The same grep first runs on an
// unencrypted node holding the same events (same stream definition, S2
// compression included), where it must find them: so it can fail.
func checkStoreEncrypted(ctx context.Context, t *testing.T, evs []events.Event, ctrs []testcontainers.Container) {
	_, plain, js := singleNATS(ctx, t)
	publishAll(ctx, t, js, evs)
	baseline := copyStore(t, plain.ctr.GetContainerID())
	hasSSN := bytes.Contains(baseline, []byte("123-45-6789")) || bytes.Contains(baseline, []byte("123456789"))
	if !hasSSN || !bytes.Contains(baseline, []byte("1791-12-26")) {
		t.Fatal("baseline: the unencrypted store does not hold the SSN and date of birth; the check would prove nothing")
	}
	for i, c := range ctrs {
		all := copyStore(t, c.GetContainerID())
		for _, secret := range secretsOfFixture {
			if bytes.Contains(all, []byte(secret)) {
				t.Errorf("node %d: store files (%d bytes) hold %q in plaintext", i, len(all), secret)
			}
		}
	}
}
