package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/replica"
	"github.com/lookup/persons/internal/testing/fixtures"
	"github.com/lookup/persons/internal/testing/testkit"
)

// The signal matrix (issue 20): the real program, a child process (this
// test binary, built with the race detector by make test), holding a model
// large enough that each phase lasts a while, is sent a signal in the
// middle of each long-running phase. Each run must exit 0 within
// LOOKUP_SHUTDOWN_DELAY + LOOKUP_SHUTDOWN_TIMEOUT; while the API is ready,
// a client polling throughout the delay sees no failed request; the next
// start opens the model without a refusal and converges. A race found in
// the child makes it exit 66, which fails the run like any other status.

const (
	matrixPeople  = 10000
	matrixSigners = 10000
	matrixDelay   = 2 * time.Second
	matrixTimeout = 15 * time.Second
	matrixAdmin   = "s3cret-admin-token-of-32-chars!!"
)

// matrix is the infrastructure the signal tests share: a NATS server whose
// PERSONS stream holds the population's events, and the files the
// children read.
type matrix struct {
	ns         *server.Server
	js         jetstream.JetStream
	pop        *fixtures.Population
	last       uint64 // the stream's last sequence
	adminToken string // file
	jwks       string // file
}

func newMatrix(t *testing.T) *matrix {
	t.Helper()
	ns := runNATS(t)
	nc, _ := testkit.ConnectNATS(t, ns.ClientURL())
	js, err := jetstream.New(nc, jetstream.WithPublishAsyncMaxPending(fixtures.PublishWindow))
	if err != nil {
		t.Fatal(err)
	}
	createStream(t, js, "PERSONS")
	pop := fixtures.NewPopulation(matrixPeople, matrixSigners, 20)
	last, err := fixtures.PublishBulk(t.Context(), js, pop.Entities(), pop.Next, nil)
	if err != nil {
		t.Fatal(err)
	}
	adminToken := filepath.Join(t.TempDir(), "admin-token")
	if err := os.WriteFile(adminToken, []byte(matrixAdmin+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return &matrix{ns: ns, js: js, pop: pop, last: last, adminToken: adminToken, jwks: writeJWKS(t)}
}

// env is a serve environment on dir with snapshots, the admin token and
// the matrix's delay and timeout.
func (m *matrix) env(t *testing.T, dir string) map[string]string {
	e := serveEnv(t, m.ns, dir)
	e["LOOKUP_JWKS_FILE"] = m.jwks
	e["LOOKUP_SNAPSHOT_BUCKET"] = "LOOKUP_SNAPSHOTS"
	e["LOOKUP_ADMIN_TOKEN_FILE"] = m.adminToken
	e["LOOKUP_SHUTDOWN_DELAY"] = matrixDelay.String()
	e["LOOKUP_SHUTDOWN_TIMEOUT"] = matrixTimeout.String()
	return e
}

// child is one run of lookupd in a process.
type child struct {
	cmd    *exec.Cmd
	stderr *testkit.LogBuffer
	done   chan struct{}
	err    error
}

func startChild(t *testing.T, environ map[string]string, args ...string) *child {
	t.Helper()
	cmd, errOut := lookupdCmd(t, environ, args...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, stderr: errOut, done: make(chan struct{})}
	go func() { c.err = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			_ = cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// signalAndWait sends sig and returns the exit error once the process has
// ended, failing the test when that takes longer than within.
func (c *child) signalAndWait(t *testing.T, sig os.Signal, within time.Duration) error {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c.done:
		return c.err
	case <-time.After(within):
		_ = c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("still running %v after %v; stderr:\n%s", within, sig, c.stderr)
		return nil
	}
}

// logged reports whether the child has logged a line whose msg is msg.
func (c *child) logged(msg string) bool {
	sc := bufio.NewScanner(strings.NewReader(c.stderr.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Msg string `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg {
			return true
		}
	}
	return false
}

// loggedAt returns the time of the first line the child logged whose msg
// is msg (the child's clock is the machine's, as the test's is).
func (c *child) loggedAt(msg string) (time.Time, bool) {
	sc := bufio.NewScanner(strings.NewReader(c.stderr.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var line struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == msg {
			return line.Time, true
		}
	}
	return time.Time{}, false
}

// waitLogged polls the child's log for msg, failing if the child ends
// first.
func (c *child) waitLogged(t *testing.T, timeout time.Duration, msg string) {
	t.Helper()
	testkit.WaitFor(t, timeout, func() error {
		select {
		case <-c.done:
			t.Fatalf("lookupd ended (%v) before logging %q; stderr:\n%s", c.err, msg, c.stderr)
		default:
		}
		if !c.logged(msg) {
			return fmt.Errorf("no %q in the log yet", msg)
		}
		return nil
	})
}

// addrs returns the bound API and admin addresses from the child's log.
func (c *child) addrs(t *testing.T) map[string]string {
	t.Helper()
	return (&program{stderr: c.stderr, done: make(chan error, 1)}).addrs(t)
}

// checkStopped fails unless the child exited 0 without a panic or a race.
// It reports whether the child logged none of the lines notBefore (the
// end of the phase it was signalled in): false when the phase had ended
// first, and the signal did not reach it in its middle.
func (c *child) checkStopped(t *testing.T, err error, notBefore ...string) (interrupted bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("exit: %v, want status 0; stderr:\n%s", err, c.stderr)
	}
	if strings.Contains(c.stderr.String(), "panic:") || strings.Contains(c.stderr.String(), "DATA RACE") {
		t.Errorf("stderr holds a panic or a race:\n%s", c.stderr)
	}
	for _, msg := range notBefore {
		if c.logged(msg) {
			return false
		}
	}
	return true
}

// phaseTries is how many times a phase that may end before the signal
// reaches it is tried: one of them must be interrupted in its middle.
const phaseTries = 4

// interruptPhase runs try until it reports a phase interrupted in its
// middle, at most phaseTries times, failing the test if none was.
func interruptPhase(t *testing.T, what string, try func() bool) {
	t.Helper()
	for range phaseTries {
		if try() {
			return
		}
	}
	t.Fatalf("%s ended before the signal in each of %d tries: make the model larger", what, phaseTries)
}

// poller sends protected GETs (signers, SSN in full) at the API from the
// time it starts until the child it polls has ended, recording when each
// answer or failure came. Whether a failure counts is decided by the
// child's own log, not by a guessed margin: the listener cannot close
// before the shutdown delay, which the child logs as it begins, has
// passed, so a request that failed before the delay's end failed while
// the API had to answer; one that failed after it may have met the closed
// listener (each worker stops at its first failure).
type poller struct {
	mu       sync.Mutex
	answered []time.Time // when each 200 came
	failures []failure
	stop     chan struct{}
	stopOnce sync.Once
	wg       sync.WaitGroup
}

// failure is a request that was not answered 200, and when that was
// known.
type failure struct {
	at  time.Time
	err error
}

func startPoller(t *testing.T, api, consumer string, workers int) *poller {
	t.Helper()
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience, Subject: "poller", Scope: "read:persons read:persons:ssn"})
	p := &poller{stop: make(chan struct{})}
	client := &http.Client{Timeout: 60 * time.Second} // bounds a hang only
	url := "http://" + api + "/api/v1/authorized-signers?consumer_id=" + consumer + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL"
	for range workers {
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			for {
				select {
				case <-p.stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, url, nil)
				req.Header.Set("Authorization", "Bearer "+tok)
				resp, err := client.Do(req)
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						p.mu.Lock()
						p.answered = append(p.answered, time.Now())
						p.mu.Unlock()
						continue
					}
					err = errors.New(resp.Status)
				}
				p.mu.Lock()
				p.failures = append(p.failures, failure{at: time.Now(), err: err})
				p.mu.Unlock()
				return
			}
		}()
	}
	t.Cleanup(p.halt)
	return p
}

// halt stops the workers and waits for them.
func (p *poller) halt() {
	p.stopOnce.Do(func() { close(p.stop) })
	p.wg.Wait()
}

// ok returns how many requests were answered 200 so far.
func (p *poller) ok() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.answered)
}

// check stops the poller once c has ended and fails the test if a request
// failed before the end of c's shutdown delay, or if none was answered
// during the delay.
func (p *poller) check(t *testing.T, c *child) {
	t.Helper()
	<-c.done
	p.halt()
	began, ok := c.loggedAt("not ready; still serving during the shutdown delay")
	if !ok {
		t.Errorf("no shutdown delay logged; stderr:\n%s", c.stderr)
		return
	}
	end := began.Add(matrixDelay)
	var failed, after []string
	for _, f := range p.failures {
		if f.at.Before(end) {
			failed = append(failed, fmt.Sprintf("%v at %v into the delay", f.err, f.at.Sub(began)))
		} else {
			after = append(after, fmt.Sprintf("%v at %v into the delay", f.err, f.at.Sub(began)))
		}
	}
	t.Logf("after the delay's end (%v), as the listener closed: %s", matrixDelay, strings.Join(after, "; "))
	during := 0
	for _, at := range p.answered {
		if !at.Before(began) {
			during++
		}
	}
	if len(failed) > 0 {
		t.Errorf("%d requests failed before the end of the shutdown delay (%s); %d were answered during it", len(failed), strings.Join(failed, "; "), during)
	}
	if during == 0 {
		t.Error("no request answered during the shutdown delay: the poller did not poll")
	}
}

// converge starts serve on env's data directory and checks that it opens
// the model without a refusal and catches up with the whole stream, then
// stops it with SIGTERM.
func (m *matrix) converge(t *testing.T, environ map[string]string) {
	t.Helper()
	c := startChild(t, environ, "serve")
	addrs := c.addrs(t)
	waitOK(t, 120*time.Second, "http://"+addrs["admin"]+"/readyz", "")
	want := fmt.Sprint(m.last)
	testkit.WaitFor(t, 60*time.Second, func() error {
		if got := metric(t, addrs["admin"], "lookup_projector_applied_sequence"); got != want {
			return fmt.Errorf("applied sequence %s, want %s", got, want)
		}
		return nil
	})
	c.checkStopped(t, c.signalAndWait(t, syscall.SIGTERM, matrixDelay+matrixTimeout))
}

// TestSignalMatrix sends SIGTERM in the middle of each long-running phase
// of lookupd serve.
func TestSignalMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("the signal matrix runs the program several times over a large model")
	}
	m := newMatrix(t)
	live := filepath.Join(t.TempDir(), "live") // the model the phases share, built by catch-up
	consumer := m.pop.ConsumerID(0)
	bound := matrixDelay + matrixTimeout

	t.Run("catch-up after start", func(t *testing.T) {
		c := startChild(t, m.env(t, live), "serve")
		addrs := c.addrs(t)
		testkit.WaitFor(t, 60*time.Second, func() error {
			if v := metric(t, addrs["admin"], "lookup_projector_applied_sequence"); v == "" || v == "0" {
				return errors.New("nothing applied yet")
			}
			return nil
		})
		if !c.checkStopped(t, c.signalAndWait(t, syscall.SIGTERM, bound), "read model caught up; ready") {
			t.Fatal("the catch-up ended before the signal: make the model larger")
		}
		m.converge(t, m.env(t, live))
	})

	t.Run("snapshot upload", func(t *testing.T) {
		// With a delay: the requests of the delay are answered while the
		// upload goes on (it may finish during the delay).
		c := startChild(t, m.env(t, live), "serve")
		addrs := c.addrs(t)
		waitReady(t, addrs["admin"])
		go func() { _, _, _ = post("http://"+addrs["admin"]+"/snapshot", matrixAdmin) }()
		c.waitLogged(t, 30*time.Second, "writing snapshot")
		p := startPoller(t, addrs["api"], consumer, 2)
		err := c.signalAndWait(t, syscall.SIGTERM, bound)
		p.check(t, c)
		c.checkStopped(t, err)
		// Without one: the upload is cut short as its first chunks arrive.
		interruptPhase(t, "the snapshot upload", func() bool {
			e := m.env(t, live)
			e["LOOKUP_SHUTDOWN_DELAY"] = "0s"
			c := startChild(t, e, "serve")
			waitReady(t, c.addrs(t)["admin"])
			before := m.snapshotChunks(t)
			go func() { _, _, _ = post("http://"+c.addrs(t)["admin"]+"/snapshot", matrixAdmin) }()
			for deadline := time.Now().Add(30 * time.Second); m.snapshotChunks(t) == before; time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no snapshot chunk stored after 30s; stderr:\n%s", c.stderr)
				}
			}
			return c.checkStopped(t, c.signalAndWait(t, syscall.SIGTERM, bound), "snapshot stored")
		})
		// The next start converges; a whole snapshot is taken for the
		// restore below.
		n := startChild(t, m.env(t, live), "serve")
		nAddrs := n.addrs(t)
		waitReady(t, nAddrs["admin"])
		if code, body, err := post("http://"+nAddrs["admin"]+"/snapshot", matrixAdmin); code != http.StatusOK {
			t.Fatalf("POST /snapshot after the interrupted one: %d %s %v", code, body, err)
		}
		n.checkStopped(t, n.signalAndWait(t, syscall.SIGTERM, bound))
	})

	t.Run("restore from a snapshot", func(t *testing.T) {
		var fresh string
		interruptPhase(t, "the restore", func() bool {
			fresh = filepath.Join(t.TempDir(), "fresh")
			e := m.env(t, fresh)
			e["LOOKUP_SHUTDOWN_DELAY"] = "0s" // not ready yet: nothing to serve during a delay
			c := startChild(t, e, "serve")
			// The log is written every 200 ms: the restore's directory
			// beside the active one says sooner that it is under way.
			for deadline := time.Now().Add(60 * time.Second); !modelUnderWay(fresh); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no restore under way after 60s; stderr:\n%s", c.stderr)
				}
			}
			return c.checkStopped(t, c.signalAndWait(t, syscall.SIGTERM, bound), "bootstrapped from a snapshot; catching up from its position")
		})
		m.converge(t, m.env(t, fresh))
	})

	t.Run("blue/green rebuild", func(t *testing.T) {
		// With a delay: the requests of the delay are answered while the
		// rebuild goes on (it may finish during the delay).
		c := startChild(t, m.env(t, live), "serve")
		addrs := c.addrs(t)
		waitReady(t, addrs["admin"])
		if code, body, err := post("http://"+addrs["admin"]+"/rebuild", matrixAdmin); code != http.StatusAccepted {
			t.Fatalf("POST /rebuild: %d %s %v", code, body, err)
		}
		c.waitLogged(t, 30*time.Second, "rebuild started: a fresh read model is being built beside the live one")
		p := startPoller(t, addrs["api"], consumer, 2)
		err := c.signalAndWait(t, syscall.SIGTERM, bound)
		p.check(t, c)
		c.checkStopped(t, err)
		m.converge(t, m.env(t, live))
		// Without one: the rebuild is cut short in its middle, as soon as
		// its directory is there (the log is written every 200 ms).
		interruptPhase(t, "the rebuild", func() bool {
			e := m.env(t, live)
			e["LOOKUP_SHUTDOWN_DELAY"] = "0s"
			c := startChild(t, e, "serve")
			addrs := c.addrs(t)
			waitReady(t, addrs["admin"])
			if code, body, err := post("http://"+addrs["admin"]+"/rebuild", matrixAdmin); code != http.StatusAccepted {
				t.Fatalf("POST /rebuild: %d %s %v", code, body, err)
			}
			for deadline := time.Now().Add(30 * time.Second); !modelUnderWay(live); time.Sleep(time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("no rebuild under way after 30s; stderr:\n%s", c.stderr)
				}
			}
			interrupted := c.checkStopped(t, c.signalAndWait(t, syscall.SIGTERM, bound), "rebuilt read model swapped in; the old one is deleted")
			m.converge(t, m.env(t, live))
			return interrupted
		})
	})

	t.Run("burst of audited requests", func(t *testing.T) {
		e := m.env(t, live)
		e["LOOKUP_AUDIT"] = "required"
		c := startChild(t, e, "serve")
		addrs := c.addrs(t)
		waitReady(t, addrs["admin"])
		p := startPoller(t, addrs["api"], consumer, 8)
		testkit.WaitFor(t, 30*time.Second, func() error {
			if p.ok() < 50 {
				return errors.New("the burst has not started")
			}
			return nil
		})
		err := c.signalAndWait(t, syscall.SIGTERM, bound)
		p.check(t, c)
		c.checkStopped(t, err)
		m.converge(t, e)
	})
}

// TestSignalProjectAndDev sends SIGINT to lookupd project in the middle of
// its catch-up, and to lookupd dev while it starts and once it serves.
func TestSignalProjectAndDev(t *testing.T) {
	if testing.Short() {
		t.Skip("the signal matrix runs the program several times over a large model")
	}
	t.Run("project catching up", func(t *testing.T) {
		m := newMatrix(t)
		dir := filepath.Join(t.TempDir(), "data")
		e := map[string]string{"LOOKUP_NATS_URL": m.ns.ClientURL(), "LOOKUP_DATA_DIR": dir}
		c := startChild(t, e, "project", "--progress-interval", "100ms")
		c.waitLogged(t, 60*time.Second, "projecting")
		c.checkStopped(t, c.signalAndWait(t, os.Interrupt, matrixTimeout))
		n := startChild(t, e, "project", "--until-caught-up")
		select {
		case <-n.done:
			if n.err != nil {
				t.Fatalf("project --until-caught-up after the interrupted one: %v; stderr:\n%s", n.err, n.stderr)
			}
		case <-time.After(120 * time.Second):
			t.Fatalf("project --until-caught-up did not end; stderr:\n%s", n.stderr)
		}
		m.converge(t, m.env(t, dir))
	})
	for _, tc := range []struct{ name, after string }{
		{"dev starting", "dev NATS server started"},
		{"dev serving", "read model caught up; ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startChild(t, map[string]string{"LOOKUP_SHUTDOWN_TIMEOUT": matrixTimeout.String(), "LOOKUP_LOG_FORMAT": "json"}, "dev", "--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0")
			c.waitLogged(t, 60*time.Second, tc.after)
			c.checkStopped(t, c.signalAndWait(t, os.Interrupt, matrixTimeout))
		})
	}
}

// snapshotChunks returns how many messages the snapshot bucket's stream
// holds (0 before the first snapshot).
func (m *matrix) snapshotChunks(t *testing.T) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second) // bounds a hang only
	defer cancel()
	s, err := m.js.Stream(ctx, "OBJ_LOOKUP_SNAPSHOTS")
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

// modelUnderWay reports whether root holds a model directory that
// ACTIVE does not name (a download aside): a restore or a rebuild under
// way.
func modelUnderWay(root string) bool {
	active, _ := replica.ActiveDir(root)
	dirs, _ := filepath.Glob(filepath.Join(root, "model-*"))
	for _, d := range dirs {
		if d != active && !strings.HasSuffix(d, ".download") {
			return true
		}
	}
	return false
}
