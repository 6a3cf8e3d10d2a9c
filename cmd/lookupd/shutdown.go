package main

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// signalCause is the cause (context.Cause) of a context cancelled by a
// signal. It matches context.Canceled, as the context's own error does.
type signalCause struct{ sig os.Signal }

func (s *signalCause) Error() string        { return signalName(s.sig) + " received" }
func (s *signalCause) Is(target error) bool { return target == context.Canceled }

// signalName returns the conventional name of sig: SIGTERM, SIGINT, ...
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGTERM:
		return "SIGTERM"
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return sig.String()
}

// shutdownCause returns the log attributes that say why ctx ended: the
// signal that stopped the process ("signal", "SIGTERM"), or the error that
// did ("err", ...). It returns nil when ctx was simply cancelled (a test,
// or a command that reached its goal).
func shutdownCause(ctx context.Context) []any {
	cause := context.Cause(ctx)
	var sc *signalCause
	switch {
	case errors.As(cause, &sc):
		return []any{"signal", signalName(sc.sig)}
	case cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded):
		return nil
	default:
		return []any{"err", cause}
	}
}
