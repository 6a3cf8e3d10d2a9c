package loadtest

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Child is a process this program started of itself (the bare server, the
// NATS server): it runs until its standard input ends.
type Child struct {
	cmd   *exec.Cmd
	stdin io.Closer
	done  chan error
}

// StartChild runs this program with args, as the process that name says,
// and returns once it has printed a line whose first word is word, with
// the line's other words.
func StartChild(ctx context.Context, name, word string, args ...string) (*Child, []string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(self, args...) //nolint:gosec // G204: this program
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("start the %s: %w", name, err)
	}
	c := &Child{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
		c.done <- cmd.Wait()
	}()
	select {
	case s := <-line:
		f := strings.Fields(s)
		if len(f) == 0 || f[0] != word {
			return nil, nil, fmt.Errorf("the %s did not start (it ended: %s; see above)", name, ErrText(c.Stop()))
		}
		return c, f[1:], nil
	case <-ctx.Done():
		_ = c.Stop()
		return nil, nil, ctx.Err()
	case <-time.After(5 * time.Minute):
		_ = c.Stop()
		return nil, nil, fmt.Errorf("the %s did not start within 5 minutes", name)
	}
}

// PID is the child's process id.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Stop closes the child's standard input, which ends it, and waits
// (killing it after 10 seconds). It returns how the process ended.
func (c *Child) Stop() error {
	_ = c.stdin.Close()
	select {
	case err := <-c.done:
		return err
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		return <-c.done
	}
}

// UntilStdinEnds returns when stdin ends (the parent gone or done with
// the child) or ctx does: what a child serves until.
func UntilStdinEnds(ctx context.Context, stdin io.Reader) {
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(gone)
	}()
	select {
	case <-gone:
	case <-ctx.Done():
	}
}

// ErrText is err's text, "cleanly" for nil: how a process ended.
func ErrText(err error) string {
	if err == nil {
		return "cleanly"
	}
	return err.Error()
}
