package lifecycle

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/lookup/persons/internal/crash"
)

// SignalCause is the cause (context.Cause) of a context cancelled by a
// signal. It matches context.Canceled, as the context's own error does.
type SignalCause struct{ Signal os.Signal }

func (s *SignalCause) Error() string        { return signalName(s.Signal) + " received" }
func (s *SignalCause) Is(target error) bool { return target == context.Canceled }

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

// NotifyContext returns a context cancelled by the first of sigs, with a
// *SignalCause as its cause (context.Cause) so that the shutdown log line
// can name the signal. After that first signal the default behaviour is
// restored, so that a second Ctrl-C kills a shutdown that hangs.
func NotifyContext(sigs ...os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, sigs...)
	go func() {
		defer crash.Guard()
		select {
		case s := <-ch:
			cancel(&SignalCause{Signal: s})
		case <-ctx.Done():
		}
		signal.Stop(ch)
	}()
	return ctx, func() { cancel(nil) }
}

// StoppedBySignal reports whether err is only the cancellation of ctx by
// a signal: the process was asked to stop, and did.
func StoppedBySignal(ctx context.Context, err error) bool {
	var sc *SignalCause
	return err != nil && errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &sc)
}

// Cause returns the log attributes that say why ctx ended: the signal
// that stopped the process ("signal", "SIGTERM"), or the error that did
// ("err", ...). It returns nil when ctx was simply cancelled (a test, or a
// command that reached its goal).
func Cause(ctx context.Context) []any {
	cause := context.Cause(ctx)
	var sc *SignalCause
	switch {
	case errors.As(cause, &sc):
		return []any{"signal", signalName(sc.Signal)}
	case cause == nil || errors.Is(cause, context.Canceled) || errors.Is(cause, context.DeadlineExceeded):
		return nil
	default:
		return []any{"err", cause}
	}
}
