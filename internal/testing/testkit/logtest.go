// Logs: it captures what code under test logs, so that a test can
// assert on log lines (and on what must never be in them).

package testkit

import (
	"bytes"
	"log/slog"
	"sync"
)

// LogBuffer is an io.Writer safe for concurrent use that keeps everything
// written to it.
type LogBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// JSONLogger returns a logger writing JSONLogger lines at every level (debug
// included) to a new Buffer, and the buffer.
func JSONLogger() (*slog.Logger, *LogBuffer) {
	b := new(LogBuffer)
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// TextLogger is JSON with slog's text format.
func TextLogger() (*slog.Logger, *LogBuffer) {
	b := new(LogBuffer)
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
