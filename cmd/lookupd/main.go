// Command lookupd runs the Person and Authorized Signer Lookup service: the
// projector that builds the read model from the PERSONS stream, the HTTP
// API over it, and the tools around them (a zero-set-up dev mode, a demo
// data publisher, a token minter). Run "lookupd --help" for the commands.
package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/settings"
)

// version is set at build time (-ldflags "-X main.version=...").
var version = "dev"

func main() {
	ctx, stop := lifecycle.NotifyContext(os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if lifecycle.StoppedBySignal(ctx, err) {
		err = nil // a start-up step the signal cut short (a JWKS fetch, a connection): a clean stop
	}
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "lookupd: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is the exit status for run's error: 0 for none, 2 for a
// command-line error, 1 for any other.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, settings.ErrUsage):
		return 2
	default:
		return 1
	}
}
