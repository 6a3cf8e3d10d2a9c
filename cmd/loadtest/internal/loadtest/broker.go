package loadtest

import (
	"context"
	"flag"
	"fmt"
	"io"
)

// BrokerCommand is the first argument that makes loadtest the model's NATS
// server: the parent runs itself with it, so that the broker is a process
// of its own, as a deployment's is. In the tool's process it shared a Go
// runtime (its collector, its scheduler) with the open loop's load
// generator, and the audit ledger's acknowledgements waited on both.
const BrokerCommand = "nats-serve"

// RunBroker is "loadtest nats-serve --dir D": it runs a NATS server with
// JetStream on the store in D (StartNATS), prints "NATS <url>" on
// stdout, and serves until its standard input ends (the parent gone) or
// ctx ends.
func RunBroker(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet(BrokerCommand, flag.ContinueOnError)
	dir := fs.String("dir", "", "the NATS store's directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("%s: --dir is required", BrokerCommand)
	}
	srv, err := StartNATS("loadtest", *dir)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintf(stdout, "NATS %s\n", srv.URL)
	UntilStdinEnds(ctx, stdin)
	return nil
}

// Broker is the model's NATS server running as a child process.
type Broker struct {
	*Child
	URL string
}

// StartBroker starts this program as a NATS server on the store in dir and
// returns once it has said where it listens.
func StartBroker(ctx context.Context, dir string) (*Broker, error) {
	c, url, err := StartChild(ctx, "NATS server", "NATS", BrokerCommand, "--dir", dir)
	if err != nil {
		return nil, err
	}
	if len(url) != 1 {
		return nil, fmt.Errorf("the NATS server said %q, not where it listens (it ended: %s)", url, ErrText(c.Stop()))
	}
	return &Broker{Child: c, URL: url[0]}, nil
}

// Close stops the NATS server and waits until it has ended.
func (b *Broker) Close() { _ = b.Stop() }
