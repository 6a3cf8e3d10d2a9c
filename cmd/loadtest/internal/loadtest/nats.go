package loadtest

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lookup/persons/internal/testing/testkit"
)

// NATS is a NATS server with JetStream running in this process: the
// model's (in a process of its own, the tool run again) and the
// accounting's ledger.
type NATS struct {
	srv *server.Server
	URL string // client URL (nats://127.0.0.1:port)
}

// StartNATS starts a server named name storing in dir, with testkit's
// options (a free loopback port, no logs, no signal handlers), and
// returns once it accepts connections.
func StartNATS(name, dir string) (*NATS, error) {
	opts := testkit.NATSOptions(dir)
	opts.ServerName = name
	s, err := testkit.NewNATSServer(opts, 30*time.Second)
	if err != nil {
		return nil, fmt.Errorf("NATS server %s: %w", name, err)
	}
	return &NATS{srv: s, URL: s.ClientURL()}, nil
}

// Close shuts the server down and waits until it has stopped.
func (n *NATS) Close() {
	n.srv.Shutdown()
	n.srv.WaitForShutdown()
}
