package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"
)

// TestMain lets the tests run the real main in a child process: the test
// binary re-executed with LOOKUPD_TEST_MAIN=1 is lookupd.
func TestMain(m *testing.M) {
	if os.Getenv("LOOKUPD_TEST_MAIN") == "1" {
		os.Args = append([]string{"lookupd"}, os.Args[1:]...)
		main()
		return
	}
	os.Exit(m.Run())
}

// lookupdCmd returns a command running main with args and the LOOKUP_
// variables of environ (and nothing else of ours), and the buffer its
// standard error goes to.
func lookupdCmd(t *testing.T, environ map[string]string, args ...string) (*exec.Cmd, *testkit.LogBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{"LOOKUPD_TEST_MAIN=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LOOKUP_") && !strings.HasPrefix(kv, "LOOKUPD_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range environ {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var errOut testkit.LogBuffer
	cmd.Stderr = &errOut
	return cmd, &errOut
}

// exitCases are lookupd's exit statuses: 0 for help and version, 2 for a
// command-line error, 1 for a start-up error. TestExitCode checks them
// through run, TestMainExitStatus through the real main in a process.
var exitCases = []struct {
	name string
	args []string
	want int
}{
	{"help", []string{"--help"}, 0},
	{"version", []string{"version"}, 0},
	{"unknown command", []string{"nope"}, 2},
	{"another unknown command", []string{"frobnicate"}, 2},
	{"bad flag", []string{"token", "--nope"}, 2},
	{"bad flag of serve", []string{"serve", "--bogus"}, 2},
	{"start-up error", []string{"serve", "--jwks-file", ""}, 1},
	{"no JWKS", []string{"serve"}, 1},
}

func TestExitCode(t *testing.T) {
	for _, tt := range exitCases {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut testkit.LogBuffer
			err := run(t.Context(), tt.args, env(map[string]string{"LOOKUP_DATA_DIR": t.TempDir()}), &out, &errOut)
			if got := exitCode(err); got != tt.want {
				t.Errorf("exit code = %d (err %v), want %d", got, err, tt.want)
			}
		})
	}
}

func TestMainExitStatus(t *testing.T) {
	for _, tt := range exitCases {
		t.Run(tt.name, func(t *testing.T) {
			cmd, errOut := lookupdCmd(t, map[string]string{"LOOKUP_DATA_DIR": t.TempDir()}, tt.args...)
			err := cmd.Run()
			got := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				got = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("exit status %d, want %d; stderr:\n%s", got, tt.want, errOut)
			}
		})
	}
}

// TestMainSIGTERM runs serve as a real process and stops it with SIGTERM:
// it exits 0 after a clean shutdown.
func TestMainSIGTERM(t *testing.T) {
	ns, _ := personsNATS(t)
	dir := filepath.Join(t.TempDir(), "data")
	cmd, errOut := lookupdCmd(t, serveEnv(t, ns, dir), "serve")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	p := &program{stderr: errOut, done: make(chan error, 1)}
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("lookupd serve after SIGTERM: %v\nstderr:\n%s", err, errOut)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("lookupd serve still running 30s after SIGTERM\nstderr:\n%s", errOut)
	}
}
