//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/testcontainers/testcontainers-go"
)

// checkLookupdUser connects as the lookupd user of deploy/nats/auth.conf (its
// own inbox prefix) and does what lookupd does: reads PERSONS with an
// ordered consumer and by sequence, writes PERSONS_DLQ and PERSONS_AUDIT,
// keeps snapshots in the object store lookup-snapshots. Publishing an event,
// deleting or purging PERSONS and reading other users' inboxes are refused.
func checkLookupdUser(ctx context.Context, t *testing.T, s *secrets, urls []string, events int, last uint64) {
	nc, ae, js := jetStreamAs(t, s, urls, "lookupd", nats.CustomInboxPrefix(lookupdInboxPrefix))
	t.Run("ordered consumer reads every event of PERSONS", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		st, err := js.Stream(cctx, "PERSONS")
		if err != nil {
			t.Fatalf("stream PERSONS: %v", err)
		}
		c, err := st.OrderedConsumer(cctx, jetstream.OrderedConsumerConfig{})
		if err != nil {
			t.Fatalf("ordered consumer: %v", err)
		}
		// Next may fail while the cluster places the consumer (no
		// responders): the ordered consumer recreates it on the next call.
		got := 0
		eventually(t, 30*time.Second, "read every event", func() error {
			for got < events {
				if _, err := c.Next(jetstream.FetchMaxWait(2 * time.Second)); err != nil {
					return fmt.Errorf("event %d of %d: %w", got+1, events, err)
				}
				got++
			}
			return nil
		})
		if _, err := st.GetMsg(cctx, last); err != nil {
			t.Errorf("get message %d: %v", last, err)
		}
	})
	t.Run("writes the DLQ, the audit stream and snapshots", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for _, subj := range []string{"dlq.persons.x", "audit.replicas.x"} {
			if _, err := js.Publish(cctx, subj, []byte("{}")); err != nil {
				t.Errorf("publish %s: %v", subj, err)
			}
		}
		if _, err := js.Stream(cctx, "PERSONS_AUDIT"); err != nil {
			t.Errorf("stream PERSONS_AUDIT: %v", err)
		}
		store, err := js.CreateObjectStore(cctx, jetstream.ObjectStoreConfig{Bucket: "lookup-snapshots"})
		if err != nil {
			t.Fatalf("create object store: %v", err)
		}
		if _, err := store.PutBytes(cctx, "snap", []byte("snapshot bytes")); err != nil {
			t.Fatalf("put snapshot: %v", err)
		}
		got, err := store.GetBytes(cctx, "snap")
		if err != nil || string(got) != "snapshot bytes" {
			t.Errorf("get snapshot: got %q, %v; want %q", got, err, "snapshot bytes")
		}
	})
	tests := []struct{ name, subject, data string }{
		{"publish an event", "persons.x", "{}"},
		{"delete PERSONS", "$JS.API.STREAM.DELETE.PERSONS", ""},
		{"purge PERSONS", "$JS.API.STREAM.PURGE.PERSONS", ""},
		{"create a stream of its own", "$JS.API.STREAM.CREATE.OTHER", `{"name":"OTHER","subjects":["other.>"]}`},
	}
	for _, tt := range tests {
		t.Run("refused: "+tt.name, func(t *testing.T) {
			denied(t, nc, ae, tt.subject, []byte(tt.data))
		})
	}
	t.Run("refused: subscribe to the default inbox", func(t *testing.T) {
		deniedSubscribe(t, nc, ae, "_INBOX.>")
	})
}

// checkLookupdSecure starts `lookupd serve` on the secure cluster as the
// NATS user lookupd over mutual TLS with its read model encrypted: it
// projects every event and answers the API; its read model's files hold
// no SSN or date of birth.
func checkLookupdSecure(ctx context.Context, t *testing.T, s *secrets, nw string, f *fixture, last uint64) {
	is := newIssuer(t)
	ld := startLookupd(ctx, t, s.lookupdConfig(lookupdConfig{
		network: nw,
		natsURL: "tls://nats-0.nats:4222,tls://nats-1.nats:4222,tls://nats-2.nats:4222",
		volume:  "lookup-secure-" + uuid.NewString()[:8],
		jwks:    is.jwks,
	}))
	ld.waitReady(t)
	ld.waitApplied(t, last, 60*time.Second)
	checkAPI(t, ld.api, is, f)

	all := copyFiles(t, ld.ctr.GetContainerID(), "/data")
	for _, secret := range secretsOfFixture {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("read model files (%d bytes) hold %q in plaintext", len(all), secret)
		}
	}
}

// lookupdConfig returns cfg with what secure.yaml gives lookupd: the NATS
// user lookupd with its password and client certificate (mutual TLS, the
// CA of s) and the read model's encryption key, as files and environment
// added to cfg's own.
func (s *secrets) lookupdConfig(cfg lookupdConfig) lookupdConfig {
	files := slices.Clone(cfg.files)
	for _, name := range []string{"password", "ca.crt", "tls.crt", "tls.key"} {
		files = append(files, testcontainers.ContainerFile{
			HostFilePath: s.file("lookupd", name), ContainerFilePath: "/etc/lookupd/nats/" + name, FileMode: 0o444,
		})
	}
	files = append(files, testcontainers.ContainerFile{
		HostFilePath: s.file("lookupd-store", "key"), ContainerFilePath: "/etc/lookupd/store/key", FileMode: 0o444,
	})
	cfg.files = files
	env := map[string]string{
		"LOOKUP_NATS_USER":           "lookupd",
		"LOOKUP_NATS_PASSWORD_FILE":  "/etc/lookupd/nats/password",
		"LOOKUP_NATS_CA_FILE":        "/etc/lookupd/nats/ca.crt",
		"LOOKUP_NATS_CERT_FILE":      "/etc/lookupd/nats/tls.crt",
		"LOOKUP_NATS_KEY_FILE":       "/etc/lookupd/nats/tls.key",
		"LOOKUP_ENCRYPTION_KEY_FILE": "/etc/lookupd/store/key",
	}
	maps.Copy(env, cfg.env)
	cfg.env = env
	return cfg
}
