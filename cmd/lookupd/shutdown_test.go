package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/lookup/persons/internal/dev"
	"github.com/lookup/persons/internal/lifecycle"
	"github.com/lookup/persons/internal/testing/testkit"
)

// TestServeLogsTheSignal checks that the shutdown log line of serve names
// the signal that started it.
func TestServeLogsTheSignal(t *testing.T) {
	ns := runNATS(t)
	createStream(t, jetStream(t, ns), "PERSONS")
	environ := serveEnv(t, ns, t.TempDir())
	environ["LOOKUP_LOG_FORMAT"] = "json"
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	p := &program{stdout: &testkit.LogBuffer{}, stderr: &testkit.LogBuffer{}, done: make(chan error, 1)}
	go func() { p.done <- run(ctx, []string{"serve"}, env(environ), p.stdout, p.stderr) }()
	waitReady(t, p.addrs(t)["admin"])
	cancel(&lifecycle.SignalCause{Signal: syscall.SIGTERM})
	if err := p.wait(t, 30*time.Second); err != nil {
		t.Fatalf("serve: %v\nstderr:\n%s", err, p.stderr)
	}
	var line string
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(l, `"msg":"shutting down"`) {
			line = l
		}
	}
	if !strings.Contains(line, `"signal":"SIGTERM"`) || !strings.Contains(line, `"drain_timeout":"20s"`) {
		t.Errorf("shutdown line = %q, want signal SIGTERM and drain_timeout 20s", line)
	}
}

// TestServeShutdownDelay checks a rolling update's view of a replica that
// receives SIGTERM: /readyz turns 503 at once, the API still answers new
// connections during LOOKUP_SHUTDOWN_DELAY, and only then does it stop.
func TestServeShutdownDelay(t *testing.T) {
	const delay = 4 * time.Second
	ns, js := personsNATS(t)
	consumer := adaConsumer(t, "drain")
	publish(t, js, consumer)

	environ := serveEnv(t, ns, filepath.Join(t.TempDir(), "data"))
	environ["LOOKUP_SHUTDOWN_DELAY"] = delay.String()
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)
	p := &program{stdout: &testkit.LogBuffer{}, stderr: &testkit.LogBuffer{}, done: make(chan error, 1)}
	go func() { p.done <- run(ctx, []string{"serve"}, env(environ), p.stdout, p.stderr) }()
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})
	personURL := "http://" + addrs["api"] + "/api/v1/persons/" + consumer.ConsumerID
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	getFresh := func(url, tok string) (int, error) {
		r, err := testkit.HTTPGet(fresh, url, tok, nil)
		return r.Status, err
	}
	if code, err := getFresh(personURL, tok); err != nil || code != http.StatusOK {
		t.Fatalf("before SIGTERM: GET person = %d, %v; want 200", code, err)
	}

	sigterm := time.Now()
	cancel(&lifecycle.SignalCause{Signal: syscall.SIGTERM})
	testkit.WaitFor(t, delay, func() error {
		code, err := getFresh("http://"+addrs["admin"]+"/readyz", "")
		if err != nil {
			return err
		}
		if code != http.StatusServiceUnavailable {
			return fmt.Errorf("readyz = %d, want 503", code)
		}
		return nil
	})
	code, err := getFresh(personURL, tok)
	if elapsed := time.Since(sigterm); elapsed >= delay {
		t.Fatalf("the check took %v, longer than the delay %v: the machine is too slow for this test", elapsed, delay)
	}
	if err != nil || code != http.StatusOK {
		t.Errorf("after SIGTERM, within the delay: GET person on a new connection = %d, %v; want 200", code, err)
	}

	if err := p.wait(t, 60*time.Second); err != nil {
		t.Fatalf("serve: %v\nstderr:\n%s", err, p.stderr)
	}
	if elapsed := time.Since(sigterm); elapsed < delay {
		t.Errorf("serve stopped %v after SIGTERM, before the delay %v", elapsed, delay)
	}
	if _, err := getFresh(personURL, tok); err == nil {
		t.Errorf("GET person after serve stopped succeeded, want a refused connection")
	}
	if !strings.Contains(p.stderr.String(), `"shutdown_delay":"4s"`) {
		t.Errorf("no log line names the shutdown delay; stderr:\n%s", p.stderr)
	}
}

// TestRollingRestart restarts three replicas one after the other, behind
// a balancer that follows /readyz, under a steady load: with a shutdown
// delay longer than the balancer takes to notice, no request fails. The
// same restart without a delay is measured as the baseline.
func TestRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("rolling restart of three replicas under load")
	}
	ns, js := personsNATS(t)
	consumer := adaConsumer(t, "rolling")
	publish(t, js, consumer)
	tok := token(t, dev.TokenRequest{Issuer: testIssuer, Audience: testAudience})

	var baseline int64
	for _, tt := range []struct {
		name  string
		delay time.Duration
	}{
		{"no delay (baseline)", 0},
		{"shutdown delay", time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			total, failed, examples := rollingRestart(t, ns, tt.delay, consumer.ConsumerID, tok)
			t.Logf("delay %v: %d requests, %d failed %v", tt.delay, total, failed, examples)
			if tt.delay == 0 {
				baseline = failed
				return
			}
			if total < 100 {
				t.Fatalf("only %d requests during the restart: no load to speak of", total)
			}
			if failed != 0 {
				t.Errorf("%d of %d requests failed during the rolling restart (baseline without delay: %d); first: %v", failed, total, baseline, examples)
			}
		})
	}
}

// rollingRestart starts three replicas with the shutdown delay, puts load
// on them through a balancer, restarts each in turn on its data directory
// and returns the requests sent, those that failed and a few failures.
func rollingRestart(t *testing.T, ns *server.Server, delay time.Duration, id, tok string) (total, failed int64, examples []string) {
	t.Helper()
	lb := testkit.NewBalancer(50 * time.Millisecond)
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go lb.Poll(ctx)
	front := httptest.NewServer(lb)
	defer front.Close()

	dirs := make([]string, 3)
	replicas := make([]*program, 3)
	launch := func(i int) {
		environ := serveEnv(t, ns, dirs[i])
		environ["LOOKUP_SHUTDOWN_DELAY"] = delay.String()
		replicas[i] = start(t, environ, "serve")
		addrs := replicas[i].addrs(t)
		waitReady(t, addrs["admin"])
		lb.Add("http://"+addrs["api"], "http://"+addrs["admin"])
	}
	for i := range dirs {
		dirs[i] = filepath.Join(t.TempDir(), "data")
		launch(i)
	}
	testkit.WaitFor(t, 10*time.Second, func() error {
		if n := lb.Ready(); n != 3 {
			return fmt.Errorf("%d replicas in rotation, want 3", n)
		}
		return nil
	})

	load := testkit.StartLoad(front.URL+"/api/v1/persons/"+id, tok, 4)
	for i := range replicas {
		replicas[i].cancel() // SIGTERM
		if err := replicas[i].wait(t, 60*time.Second); err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
		launch(i)
	}
	return load.Stop()
}
