//go:build integration

package integration

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// checkLookupdUser connects as the lookupd user of deploy/nats/auth.conf (its
// own inbox prefix) and does what lookupd does: reads PERSONS with an
// ordered consumer and by sequence, writes PERSONS_DLQ and PERSONS_AUDIT,
// keeps snapshots in the object store lookup-snapshots. Publishing an event,
// deleting or purging PERSONS and reading other users' inboxes are refused.
func checkLookupdUser(ctx context.Context, t *testing.T, s *secrets, urls []string, events int, last uint64) {
	nc, ae, err := connectSecure(t, urls, s.tlsConfig(t, "lookupd"), "lookupd", s.password(t, "lookupd"),
		nats.CustomInboxPrefix(lookupdInboxPrefix))
	if err != nil {
		t.Fatalf("lookupd connect: %v", err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
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
		for i := range events {
			if _, err := c.Next(jetstream.FetchMaxWait(5 * time.Second)); err != nil {
				t.Fatalf("event %d of %d: %v", i+1, events, err)
			}
		}
		if _, err := st.GetMsg(cctx, last); err != nil {
			t.Errorf("get message %d: %v", last, err)
		}
	})
	t.Run("writes the DLQ, the audit stream and snapshots", func(t *testing.T) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for _, subj := range []string{"dlq.persons.x", "audit.persons.x"} {
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
		if _, err := nc.SubscribeSync("_INBOX.>"); err != nil {
			t.Fatal(err)
		}
		if err := ae.waitPermissionViolation("_INBOX.>"); err != nil {
			t.Error(err)
		}
	})
}
