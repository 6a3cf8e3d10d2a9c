// Package logtest captures what code under test logs, so that a test can
// assert on log lines (and on what must never be in them).
package logtest

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is an io.Writer safe for concurrent use that keeps everything
// written to it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// JSON returns a logger writing JSON lines at every level (debug
// included) to a new Buffer, and the buffer.
func JSON() (*slog.Logger, *Buffer) {
	b := new(Buffer)
	return slog.New(slog.NewJSONHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// Text is JSON with slog's text format.
func Text() (*slog.Logger, *Buffer) {
	b := new(Buffer)
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}
