// NATS: it runs a real nats-server with JetStream in the test's
// process, the way nats-server's own tests do: on a random loopback port,
// storing in a temporary directory, shut down when the test ends.

package testkit

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// NATSOptions returns the options Run uses: loopback, a random port,
// JetStream storing in storeDir, no logging and no signal handlers. Tests
// that need more (authorization, TLS, a fixed port to restart on) start
// from these.
func NATSOptions(storeDir string) *server.Options {
	return &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: storeDir, NoLog: true, NoSigs: true}
}

// RunNATS starts a server with opts (nil: Options(t.TempDir())), waits until it
// accepts connections and shuts it down, waiting for the shutdown, when the
// test ends.
func RunNATS(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	if opts == nil {
		opts = NATSOptions(t.TempDir())
	}
	s, err := NewNATSServer(opts, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s
}

// NewNATSServer starts a server with opts and returns it once it accepts
// connections, or an error after wait (the server shut down). Unlike
// RunNATS it is tied to no test: the caller shuts it down (the load
// tool's brokers, which outlive no test).
func NewNATSServer(opts *server.Options, wait time.Duration) (*server.Server, error) {
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	s.Start()
	if !s.ReadyForConnections(wait) {
		s.Shutdown()
		s.WaitForShutdown()
		return nil, fmt.Errorf("nats-server not ready after %v", wait)
	}
	return s, nil
}

// ConnectNATS connects to url with opts and returns the connection and its
// JetStream context; the connection is closed when the test ends.
func ConnectNATS(t testing.TB, url string, opts ...nats.Option) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatalf("nats connect %s: %v", url, err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatalf("jetstream: %v", err)
	}
	return nc, js
}

// StartNATS is Run with the default options followed by Connect: the common
// case of a test that needs one JetStream server and a connection to it.
func StartNATS(t testing.TB) (*nats.Conn, jetstream.JetStream) {
	t.Helper()
	return ConnectNATS(t, RunNATS(t, nil).ClientURL())
}

// PersonsStream creates the stream PERSONS on persons.> (file storage), the
// stream lookupd reads, and returns it.
func PersonsStream(t testing.TB, js jetstream.JetStream) jetstream.Stream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.CreateStream(ctx, jetstream.StreamConfig{
		Name: "PERSONS", Subjects: []string{"persons.>"}, Storage: jetstream.FileStorage,
	})
	if err != nil {
		t.Fatalf("create stream PERSONS: %v", err)
	}
	return st
}
