package loadtest

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
)

// Broker is a NATS server with JetStream run inside this process, on a
// free loopback port: the broker of a soak. It lives here rather than in
// the measured lookupd (as the broker of "lookupd dev" does) so that the
// memory of the stream's millions of messages is not counted in
// lookupd's.
type Broker struct {
	srv *server.Server
	URL string // client URL
}

// StartBroker starts a broker storing in dir.
func StartBroker(dir string) (*Broker, error) {
	ns, err := server.NewServer(&server.Options{
		ServerName: "loadtest-soak",
		Host:       "127.0.0.1",
		Port:       server.RANDOM_PORT,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		return nil, fmt.Errorf("soak NATS server: %w", err)
	}
	ns.Start()
	if !ns.ReadyForConnections(30 * time.Second) {
		ns.Shutdown()
		return nil, errors.New("soak NATS server: not ready after 30s")
	}
	return &Broker{srv: ns, URL: ns.ClientURL()}, nil
}

// Close shuts the broker down and waits for it.
func (b *Broker) Close() {
	b.srv.Shutdown()
	b.srv.WaitForShutdown()
}

// PersonsStream is the source stream as deployed: the definition of
// deploy/streams/persons.json (a test keeps them equal), named name.
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

// CreateStream creates cfg on js.
func CreateStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if _, err := js.CreateStream(ctx, cfg); err != nil {
		return fmt.Errorf("create stream %s: %w", cfg.Name, err)
	}
	return nil
}
