package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"

	"github.com/lookup/persons/internal/settings"
)

// commands lists the sub-commands in the order of the help.
var commands = []struct {
	name, synopsis string
	run            func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error
}{
	{"serve", "projector and query API over one read model, plus the admin listener", cmdServe},
	{"project", "projector alone: build or rebuild a read model (--until-caught-up)", cmdProject},
	{"dev", "everything on this machine, zero set-up: NATS, demo data, dev key; prints a token and curl commands", cmdDev},
	{"demo", "publish the demo data set to any NATS server (--print: write it as JSON lines)", cmdDemo},
	{"dlq", "list (ls) and replay (replay) the dead-letter stream's events", cmdDLQ},
	{"audit", "accounting of disclosures of a person (--person), check the audit ledger (audit verify), serve the accounting (audit serve)", cmdAudit},
	{"erasure", "what remains of a deleted person in each place, and when it was erased (erasure status --person ID)", cmdErasure},
	{"token", "mint a token with the dev key (development only)", cmdToken},
	{"version", "print the version", cmdVersion},
}

// subCommand runs a sub-command ("dlq ls") with the arguments after its
// name.
type subCommand func(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error

// dispatch runs the sub-command of the command name that args[0] names
// among subs. Help writes usage to stdout; no sub-command, or an unknown
// one, writes it to stderr and is a usage error.
func dispatch(ctx context.Context, name, usage string, subs map[string]subCommand, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		if sub, ok := subs[args[0]]; ok {
			return sub(ctx, args[1:], getenv, stdout, stderr)
		}
		switch args[0] {
		case "-h", "-help", "--help", "help":
			fmt.Fprint(stdout, usage)
			return nil
		}
	}
	fmt.Fprint(stderr, usage)
	if len(args) == 0 {
		return &settings.UsageError{Err: fmt.Errorf("lookupd %s: no sub-command given", name)}
	}
	return &settings.UsageError{Err: fmt.Errorf("lookupd %s: unknown sub-command %q", name, args[0])}
}

// run is the whole program: it runs the command named by args[0] until it
// ends or ctx is done. It reads the environment only through getenv and
// writes only to stdout and stderr. A command-line error returns an error
// matching settings.ErrUsage (exit status 2); --help returns nil.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		topUsage(stderr)
		return &settings.UsageError{Err: errors.New("no command given")}
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 && name == "help" {
			return run(ctx, []string{args[1], "--help"}, getenv, stdout, stderr)
		}
		topUsage(stdout)
		return nil
	case "-version", "--version":
		name = "version"
	}
	for _, c := range commands {
		if c.name == name {
			err := c.run(ctx, args[1:], getenv, stdout, stderr)
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return err
		}
	}
	topUsage(stderr)
	return &settings.UsageError{Err: fmt.Errorf("unknown command %q", name)}
}

func topUsage(w io.Writer) {
	fmt.Fprintf(w, "lookupd: the Person and Authorized Signer Lookup service.\n\nUsage: lookupd <command> [flags]\n\nCommands:\n")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.synopsis)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nRun \"lookupd <command> --help\" for its flags and environment variables.\n")
}

func cmdVersion(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, err := settings.NewCommand(0, "version", "Prints the version of lookupd and of the Go toolchain that built it.", getenv)
	if err != nil {
		return err
	}
	if err := c.Parse(args, stdout, stderr); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "lookupd %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
