package natsconn

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
)

// WaitConnected reports whether nc is connected within wait, checking
// every 50 ms; false as soon as ctx ends. For a one-off command, which
// should fail rather than retry in the background forever.
func WaitConnected(ctx context.Context, nc *nats.Conn, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for !nc.IsConnected() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
