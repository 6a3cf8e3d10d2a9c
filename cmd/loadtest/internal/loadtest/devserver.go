package loadtest

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/lookup/persons/internal/testing/fixtures"
)

// Dev is a running lookupd child process (StartServe).
type Dev struct {
	fixtures.Banner
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // its exit status, once done is closed
	logs *Tail
}

// LookupdEnv is the environment of a lookupd child: this process's, less
// its variables LOOKUP_*, so that the child has its defaults but for the
// flags it is given.
func LookupdEnv() []string {
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

// Tail is an io.Writer that keeps the last bytes written to it in a ring
// (cheap: the dev server writes an access log line a request).
type Tail struct {
	mu   sync.Mutex
	buf  []byte
	pos  int  // where the next byte goes
	full bool // the ring has wrapped
}

func NewTail(size int) *Tail { return &Tail{buf: make([]byte, size)} }

func (t *Tail) Write(p []byte) (int, error) {
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

func (t *Tail) String() string {
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
