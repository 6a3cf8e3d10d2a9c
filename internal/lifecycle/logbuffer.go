// The log buffer: it writes the log of a long-running process through a
// buffer, written out on a timer, at once after any line at WARN or above,
// and when the process returns.

package lifecycle

import (
	"context"
	"io"
	"log/slog"
	"os"
	"time"

	"go.uber.org/zap/zapcore"

	"github.com/lookup/persons/internal/crash"
)

// The long-running commands (lookupd serve, dev) write their log through a buffer:
// at tens of thousands of requests a second, one write(2) per access-log
// line cost more than the rest of the line (docs/operations.md, "Logs"). What a
// buffer holds is written when it reaches LogBufferSize, every
// LogFlushInterval, at once after any line at WARN or above (so an error
// is never held back, nor the lines before it), and when the command
// returns. What a crash of the process loses is at most the last
// LogFlushInterval of INFO lines; the log is not a record of anything
// the service must keep (the audit ledger is, and it is in JetStream).
const (
	LogBufferSize    = 256 << 10
	LogFlushInterval = 200 * time.Millisecond
)

// NewLog returns the logger newLogger makes over w, and the function to call
// once when the process returns. When w is a file (stderr, as the process
// runs), the logger writes through a buffer (see Buffered); any other
// writer, which costs no system call a line, gets every line at once.
func NewLog(w io.Writer, newLogger func(io.Writer) *slog.Logger) (*slog.Logger, func()) {
	if _, ok := w.(*os.File); !ok {
		return newLogger(w), func() {}
	}
	return BufferedLog(w, newLogger)
}

// BufferedLog returns the logger newLogger makes over a buffer in front of w,
// and the function that writes out what the buffer holds and stops its
// flushing.
func BufferedLog(w io.Writer, newLogger func(io.Writer) *slog.Logger) (*slog.Logger, func()) {
	ws := &zapcore.BufferedWriteSyncer{
		// AddSync of a bare io.Writer: Sync writes the buffer out and never
		// fsyncs the file behind w (stderr may be a pipe or a disk file).
		WS:            zapcore.AddSync(struct{ io.Writer }{w}),
		Size:          LogBufferSize,
		FlushInterval: LogFlushInterval,
	}
	base := newLogger(ws)
	logger := slog.New(flushOnWarn{Handler: base.Handler(), flush: func() { _ = ws.Sync() }})
	// A panic in a background goroutine writes the buffer out first.
	unregister := crash.OnPanic(func() { _ = ws.Sync() })
	return logger, func() { unregister(); _ = ws.Stop() }
}

// WriteLogOut writes out what the buffer of logger holds, when it has one
// (a logger of New or Buffered): for output on stdout that should follow
// the log lines before it.
func WriteLogOut(logger *slog.Logger) {
	if h, ok := logger.Handler().(flushOnWarn); ok {
		h.flush()
	}
}

// flushOnWarn is a slog.Handler that writes the buffer out after every
// record at WARN or above.
type flushOnWarn struct {
	slog.Handler
	flush func()
}

func (h flushOnWarn) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		h.flush()
	}
	return err
}

func (h flushOnWarn) WithAttrs(attrs []slog.Attr) slog.Handler {
	return flushOnWarn{Handler: h.Handler.WithAttrs(attrs), flush: h.flush}
}

func (h flushOnWarn) WithGroup(name string) slog.Handler {
	return flushOnWarn{Handler: h.Handler.WithGroup(name), flush: h.flush}
}
