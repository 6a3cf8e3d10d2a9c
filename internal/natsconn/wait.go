package natsconn

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/internal/redact"
)

// Reachable returns nil once nc, a connection to urls, is connected within
// wait, checking every 50 ms. Else, when the wait is over or as soon as
// ctx ends, it closes nc and returns an error naming urls (without
// credentials). For a one-off command, which should fail rather than
// retry in the background forever.
func Reachable(ctx context.Context, nc *nats.Conn, urls string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for !nc.IsConnected() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			nc.Close()
			return fmt.Errorf("nats %s: not reachable within %v", redact.URLs(urls), wait)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}
