//go:build integration

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binaries are the programs the end-to-end test runs, built from source.
type binaries struct{ lookupd, natsServer, oauth2Proxy string }

// build builds lookupd and nats-server from the repository's module and
// oauth2-proxy from this module's tool directive, as the Makefile builds
// them for their images (CGO_ENABLED=0, -trimpath: the same build cache),
// one after the other.
func build(t *testing.T) binaries {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !bytes.HasPrefix(b, []byte("module github.com/lookup/persons\n")) {
		t.Fatalf("%s is not the repository's root (%v)", root, err)
	}
	dir := t.TempDir()
	b := binaries{filepath.Join(dir, "lookupd"), filepath.Join(dir, "nats-server"), filepath.Join(dir, "oauth2-proxy")}
	goBuild(t, root, b.lookupd, "./cmd/lookupd")
	goBuild(t, root, b.natsServer, "-ldflags", "-s -w", "github.com/nats-io/nats-server/v2")
	goBuild(t, ".", b.oauth2Proxy, "-ldflags", "-s -w", "github.com/oauth2-proxy/oauth2-proxy/v7")
	return b
}

func goBuild(t *testing.T, dir, out string, args ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("go", append([]string{"build", "-trimpath", "-o", out}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	t.Logf("built %s in %s", filepath.Base(out), time.Since(start).Round(100*time.Millisecond))
}

// process is a program the test started; it is stopped (SIGTERM, then
// SIGKILL) when the test ends.
type process struct {
	name string
	out  *output
	done chan struct{}
}

// output is a program's stdout and stderr, safe for concurrent use.
type output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}

// start runs path with args and exactly the environment env (nothing of
// the test's), files as its descriptors 3 and up. redact hides secrets in
// the output a failed test prints.
func start(t *testing.T, name string, env []string, files []*os.File, redact func(string) string, path string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = env
	p := &process{name: name, out: &output{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr, cmd.ExtraFiles = p.out, p.out, files
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s's output:\n%s", name, redact(p.out.String()))
		}
	})
	return p
}

// running fails the test if p has ended.
func (p *process) running(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		t.Fatalf("%s ended", p.name)
	default:
	}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %s", what, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// answers200 reports whether a GET of url answers 200.
func answers200(url string) bool {
	resp, err := http.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// startNATS runs nats-server with JetStream on a free loopback port and
// returns its URL, read from its ports file.
func startNATS(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	ports := filepath.Join(dir, "ports")
	if err := os.Mkdir(ports, 0o700); err != nil {
		t.Fatal(err)
	}
	p := start(t, "nats-server", nil, nil, func(s string) string { return s }, bin,
		"-a", "127.0.0.1", "-p", "-1", "-js", "-sd", filepath.Join(dir, "js"), "--ports_file_dir", ports)
	var url string
	waitFor(t, "nats-server ports file", 30*time.Second, func() bool {
		p.running(t)
		files, _ := filepath.Glob(filepath.Join(ports, "*.ports"))
		if len(files) == 0 {
			return false
		}
		var pf struct {
			Nats []string `json:"nats"`
		}
		b, err := os.ReadFile(files[0])
		if err != nil || json.Unmarshal(b, &pf) != nil || len(pf.Nats) == 0 {
			return false
		}
		url = pf.Nats[0]
		return true
	})
	return url
}

// startAuditServe runs lookupd audit serve with the settings of env on
// loopback ports, and returns it and its API's address once it is ready.
func startAuditServe(t *testing.T, bin string, env []string, redact func(string) string) (*process, string) {
	t.Helper()
	env = append(env, "LOOKUP_HTTP_ADDR=127.0.0.1:0", "LOOKUP_ADMIN_ADDR=127.0.0.1:0",
		"LOOKUP_ACCOUNTING_DIR="+t.TempDir(), "LOOKUP_REPLICA_ID=accounting", "LOOKUP_LOG_FORMAT=json")
	p := start(t, "lookupd audit serve", env, nil, redact, bin, "audit", "serve")
	addrs := map[string]string{}
	waitFor(t, "listening lines of lookupd", 60*time.Second, func() bool {
		p.running(t)
		sc := bufio.NewScanner(strings.NewReader(p.out.String()))
		for sc.Scan() {
			var line struct{ Msg, Listener, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				addrs[line.Listener] = line.Addr
			}
		}
		return addrs["api"] != "" && addrs["admin"] != ""
	})
	waitFor(t, "ready lookupd", 60*time.Second, func() bool {
		p.running(t)
		return answers200("http://" + addrs["admin"] + "/readyz")
	})
	return p, addrs["api"]
}

// startProxy runs oauth2-proxy with exactly the environment env, serving
// on ln (passed as its descriptor 3: OAUTH2_PROXY_HTTP_ADDRESS fd:3, so
// that the port is known before it starts, for its redirect URL), and
// returns it once it answers /ping.
func startProxy(t *testing.T, bin string, env []string, ln *net.TCPListener, redact func(string) string) *process {
	t.Helper()
	f, err := ln.File()
	if err != nil {
		t.Fatal(err)
	}
	// systemd's socket activation: LISTEN_PID must be the proxy's own
	// pid, which a shell that execs it knows.
	p := start(t, "oauth2-proxy", env, []*os.File{f}, redact, "/bin/sh", "-c", `LISTEN_PID=$$ LISTEN_FDS=1 exec "$0"`, bin)
	f.Close()
	ln.Close() // the proxy holds the socket
	waitFor(t, "oauth2-proxy answering /ping", 30*time.Second, func() bool {
		p.running(t)
		return answers200("http://" + ln.Addr().String() + "/ping")
	})
	return p
}
