// Command lookupd runs the Person and Authorized Signer Lookup service: the
// projector that builds the read model from the PERSONS stream, the HTTP
// API over it, and the tools around them (a zero-set-up dev mode, a demo
// data publisher, a token minter). Run "lookupd --help" for the commands.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/lookup/persons/internal/crash"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	ctx, stop := notifyContext(os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if stoppedBySignal(ctx, err) {
		err = nil // a start-up step the signal cut short (a JWKS fetch, a connection): a clean stop
	}
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lookupd: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// notifyContext returns a context cancelled by the first of sigs, with a
// *signalCause as its cause (context.Cause) so that the shutdown log line
// can name the signal. After that first signal the default behaviour is
// restored, so that a second Ctrl-C kills a shutdown that hangs.
func notifyContext(sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		defer crash.Guard()
		select {
		case s := <-ch:
			cancel(&signalCause{sig: s})
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, func() { cancel(nil) }
}

// exitCode is the exit status for run's error: 0 for none, 2 for a
// command-line error, 1 for any other.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return 2
	default:
		return 1
	}
}

// stoppedBySignal reports whether err is only the cancellation of ctx by a
// signal: the process was asked to stop, and did.
func stoppedBySignal(ctx context.Context, err error) bool {
	var sc *signalCause
	return err != nil && errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &sc)
}
