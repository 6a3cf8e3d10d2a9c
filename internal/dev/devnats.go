// The in-process broker: it runs a NATS server with JetStream inside the process, on
// a free loopback port, and holds the definition of the source stream as
// deployed: the broker of "lookupd dev", so that it runs the stream
// operators apply. Tests and the load tool use internal/testing/testkit
// instead (RunNATS, tied to a testing.TB; NewNATSServer), which lookupd
// does not link.

package dev

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
)

// readyWait is how long Start waits for the server to accept connections.
const readyWait = 30 * time.Second

// NATSServer is a running in-process NATS server with JetStream.
type NATSServer struct {
	srv *server.Server
	URL string // client URL (nats://127.0.0.1:port)
}

// StartNATS starts a server named name (shown to clients and in errors),
// storing in dir, listening on a free port of the loopback interface,
// without logs or signal handlers, and returns once it accepts
// connections.
func StartNATS(name, dir string) (*NATSServer, error) {
	ns, err := server.NewServer(&server.Options{
		ServerName: name,
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("NATS server %s: %w", name, err)
	}
	ns.Start()
	if !ns.ReadyForConnections(readyWait) {
		ns.Shutdown()
		ns.WaitForShutdown()
		return nil, fmt.Errorf("NATS server %s: not ready after %v", name, readyWait)
	}
	return &NATSServer{srv: ns, URL: ns.ClientURL()}, nil
}

// Close shuts the server down and waits until it has stopped.
func (s *NATSServer) Close() {
	s.srv.Shutdown()
	s.srv.WaitForShutdown()
}

// PersonsStream is the source stream as deployed, named name: the
// definition of deploy/streams/persons.json (a test keeps them equal).
func PersonsStream(name string) jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name:              name,
		Description:       "Person and authorized signer change events, CloudEvents 1.0 JSON, contract v1 (docs/events.md)",
		Subjects:          []string{events.SubjectRoot + ".>"},
		Retention:         jetstream.LimitsPolicy,
		MaxConsumers:      -1,
		MaxMsgs:           -1,
		MaxBytes:          10 << 30,
		MaxMsgsPerSubject: 16,
		MaxMsgSize:        65536,
		Discard:           jetstream.DiscardNew,
		Storage:           jetstream.FileStorage,
		Replicas:          1,
		Duplicates:        10 * time.Minute,
		AllowDirect:       true,
		Compression:       jetstream.S2Compression,
	}
}

// EnsurePersonsStream creates the stream PersonsStream(name) on js, or
// brings an existing one (a data directory kept across runs) to it.
func EnsurePersonsStream(ctx context.Context, js jetstream.JetStream, name string) error {
	if _, err := js.CreateOrUpdateStream(ctx, PersonsStream(name)); err != nil {
		return fmt.Errorf("create stream %s: %w", name, err)
	}
	return nil
}
