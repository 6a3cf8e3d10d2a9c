package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/lookup/persons/internal/loadtest"
)

// bareCommand is the first argument that makes loadtest the bare server:
// the parent runs itself with it, so that the bare server is a process of
// its own like lookupd (its CPU measured alike, no load generator in it).
const bareCommand = "bare-serve"

// runBare is "loadtest bare-serve": it reads the model of --model-dir
// (--people, --signers, --seed as the parent's), serves its captured
// answers over HTTP and, with --cert-file and --key-file, HTTPS, prints
// "BARE <http URL> <https URL or ->" on stdout, and serves until its
// standard input ends (the parent gone) or ctx ends.
func runBare(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet(bareCommand, flag.ContinueOnError)
	var mo modelOptions
	fs.IntVar(&mo.people, "people", 0, "")
	fs.IntVar(&mo.signers, "signers", 0, "")
	fs.Uint64Var(&mo.seed, "seed", 0, "")
	fs.StringVar(&mo.dir, "model-dir", "", "")
	certFile := fs.String("cert-file", "", "")
	keyFile := fs.String("key-file", "", "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	man, ok, why := loadtest.Reusable(mo.dir, mo.key())
	if !ok {
		return fmt.Errorf("no complete model in %s: %s", mo.dir, why)
	}
	bodies, err := loadtest.ReadBodies(mo.dir)
	if err != nil {
		return err
	}
	h := loadtest.ModelHandler(loadtest.NewPopulation(mo.people, mo.signers, mo.seed), bodies, man.PersonHeader, man.SignersHeader)
	plain, err := loadtest.StartBareHandler(h, nil)
	if err != nil {
		return err
	}
	defer plain.Close()
	secure := "-"
	if *certFile != "" {
		pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
		if err != nil {
			return err
		}
		b, err := loadtest.StartBareHandler(h, &pair)
		if err != nil {
			return err
		}
		defer b.Close()
		secure = b.URL
	}
	fmt.Fprintf(stdout, "BARE %s %s\n", plain.URL, secure)
	gone := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, stdin)
		close(gone)
	}()
	select {
	case <-gone:
	case <-ctx.Done():
	}
	return nil
}

// bareChild is the bare server running as a child process.
type bareChild struct {
	cmd   *exec.Cmd
	stdin io.Closer
	url   map[bool]string // base URL by TLS
	done  chan error
}

// startBare starts this program as the bare server of m, with the run's
// certificate, and returns once it has said where it listens.
func startBare(ctx context.Context, o options, env *runEnv) (*bareChild, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	mo := o.model
	cmd := exec.Command(self, bareCommand, "--model-dir", mo.dir, "--people", fmt.Sprint(mo.people), //nolint:gosec // G204: this program
		"--signers", fmt.Sprint(mo.signers), "--seed", fmt.Sprint(mo.seed), "--cert-file", env.cert.CertFile, "--key-file", env.cert.KeyFile)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the bare server: %w", err)
	}
	b := &bareChild{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(stdout).ReadString('\n')
		line <- s
		_, _ = io.Copy(io.Discard, stdout)
		b.done <- cmd.Wait()
	}()
	select {
	case s := <-line:
		f := strings.Fields(s)
		if len(f) != 3 || f[0] != "BARE" {
			return nil, fmt.Errorf("the bare server did not start (it ended: %s; see above)", errText(b.stop()))
		}
		b.url = map[bool]string{false: f[1], true: f[2]}
		return b, nil
	case <-ctx.Done():
		_ = b.stop()
		return nil, ctx.Err()
	case <-time.After(5 * time.Minute):
		_ = b.stop()
		return nil, errors.New("the bare server did not start within 5 minutes")
	}
}

// pid is the bare server's process id.
func (b *bareChild) pid() int { return b.cmd.Process.Pid }

// stop closes the bare server's standard input, which ends it, and waits
// (killing it after 10 seconds). It returns how the process ended.
func (b *bareChild) stop() error {
	_ = b.stdin.Close()
	select {
	case err := <-b.done:
		return err
	case <-time.After(10 * time.Second):
		_ = b.cmd.Process.Kill()
		return <-b.done
	}
}
