// Package loadtest is the machinery of "make loadtest" (cmd/loadtest): a
// model of a large Population built once (its events published in bulk to
// a broker in the tool's process, internal/dev; "lookupd serve"
// caught up with them; every answer of lookupd captured into a sealed body
// store, described by a Manifest written last), ids drawn at random (Draw,
// WritePaths), a bare net/http server answering the captured bytes
// (ModelHandler), over HTTP or HTTPS (NewCert), and the load generators
// wrk and vegeta driving both; cmd/loadtest writes the figures as
// Markdown.
//
// Only ratios measured in one run mean anything: the machine is shared.
//
// For a memory soak ("make soak") it runs "lookupd serve" with its default
// settings against such a broker and Population, and samples the
// process's memory from /proc and its /metrics (MemSample) while lookups
// and events run at fixed rates.
//
// Beside the bare server it offers a yardstick of what a user would build
// instead: net/http and PostgreSQL holding the same people (StartPostgres).
package loadtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/lookup/persons/internal/dev"
)

// Dev is a running lookupd child process (StartServe).
type Dev struct {
	Banner
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
	logs *tail
}

// Banner is what the start-up banner of "lookupd dev" tells (ParseBanner),
// and where a "lookupd serve" listens (StartServe).
type Banner struct {
	API     string // base URL of the API listener
	Admin   string // base URL of the admin listener
	NATS    string // client URL of the in-process NATS server
	Stream  string // the source stream
	KeyPath string // PEM file of the dev key that signs accepted tokens
}

// lookupdEnv is the environment of a lookupd child: this process's, less
// its variables LOOKUP_*, so that the child has its defaults but for the
// flags it is given.
func lookupdEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOOKUP_") {
			env = append(env, kv)
		}
	}
	return env
}

// Stop interrupts lookupd, as Ctrl-C would, and waits for it to
// exit (killing it after 20 seconds). It returns its exit error, if any
// other than the interrupt.
func (d *Dev) Stop() error {
	_ = d.cmd.Process.Signal(os.Interrupt)
	select {
	case <-d.done:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.done
		return errors.New("lookupd did not stop within 20s of an interrupt: killed")
	}
	var exit *exec.ExitError
	if errors.As(d.err, &exit) && !exit.Exited() {
		return nil // ended by the signal itself
	}
	return d.err
}

// Logs returns the end of lookupd's log.
func (d *Dev) Logs() string { return d.logs.String() }

// ParseBanner reads the start-up output of "lookupd dev" from r until the
// banner is complete, and returns what it tells. Fields it did not find
// are "".
func ParseBanner(r io.Reader) (Banner, error) {
	var b Banner
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	more := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		f := strings.Fields(line)
		switch {
		case len(f) >= 2 && f[0] == "API":
			b.API = f[1]
		case len(f) >= 2 && f[0] == "admin":
			b.Admin = f[1]
		case len(f) >= 2 && f[0] == "NATS":
			b.NATS = f[1]
			if i := strings.Index(line, "(stream "); i >= 0 {
				b.Stream = strings.TrimSuffix(line[i+len("(stream "):], ")")
			}
		case strings.HasPrefix(line, "More tokens"):
			more = true
		case more && strings.Contains(line, " token "):
			words, err := dev.ShellSplit(line)
			if err != nil {
				return b, fmt.Errorf("the banner's token command: %w", err)
			}
			b.KeyPath = flagValue(words, "--key")
			more = false
		case strings.HasPrefix(line, "Stop with Ctrl-C"):
			return b, nil
		}
	}
	if err := sc.Err(); err != nil {
		return b, err
	}
	return b, io.ErrUnexpectedEOF
}

// flagValue returns the word after name in words, "" when there is none.
func flagValue(words []string, name string) string {
	for i := 0; i+1 < len(words); i++ {
		if words[i] == name {
			return words[i+1]
		}
	}
	return ""
}

// tail is an io.Writer that keeps the last bytes written to it in a ring
// (cheap: the dev server writes an access log line a request).
type tail struct {
	mu   sync.Mutex
	buf  []byte
	pos  int  // where the next byte goes
	full bool // the ring has wrapped
}

func newTail(size int) *tail { return &tail{buf: make([]byte, size)} }

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > len(t.buf) {
		p = p[len(p)-len(t.buf):]
	}
	for len(p) > 0 {
		c := copy(t.buf[t.pos:], p)
		p = p[c:]
		t.pos += c
		if t.pos == len(t.buf) {
			t.pos, t.full = 0, true
		}
	}
	return n, nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.full {
		return string(t.buf[:t.pos])
	}
	return string(t.buf[t.pos:]) + string(t.buf[:t.pos])
}

// Kill kills lookupd with SIGKILL, as a crash or the OOM killer would,
// and waits for it to exit.
func (d *Dev) Kill() {
	_ = d.cmd.Process.Kill()
	<-d.done
}
