package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lookup/persons/internal/logtest"
	"github.com/lookup/persons/internal/wait"
)

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
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	p := &program{stdout: &logtest.Buffer{}, stderr: &logtest.Buffer{}, done: make(chan error, 1)}
	go func() { p.done <- run(ctx, []string{"serve"}, env(environ), p.stdout, p.stderr) }()
	addrs := p.addrs(t)
	waitReady(t, addrs["admin"])
	tok := token(t, tokenRequest{Issuer: testIssuer, Audience: testAudience})
	personURL := "http://" + addrs["api"] + "/api/v1/persons/" + consumer.ConsumerID
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	getFresh := func(url, tok string) (int, error) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := fresh.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	if code, err := getFresh(personURL, tok); err != nil || code != http.StatusOK {
		t.Fatalf("before SIGTERM: GET person = %d, %v; want 200", code, err)
	}

	sigterm := time.Now()
	cancel(&signalCause{sig: syscall.SIGTERM})
	wait.For(t, delay, func() error {
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

func TestDelayShutdown(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		parent   context.Context
		delay    time.Duration
		wantWait bool
	}{
		{"signal with a delay waits", cancelled, 200 * time.Millisecond, true},
		{"no delay", cancelled, 0, false},
		{"a failed component does not wait", context.Background(), time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &http.Server{}
			done := make(chan time.Duration, 1)
			start := time.Now()
			go func() {
				delayShutdown(tt.parent, srv, tt.delay, slog.New(slog.DiscardHandler))
				done <- time.Since(start)
			}()
			select {
			case got := <-done:
				if tt.wantWait && got < tt.delay {
					t.Errorf("returned after %v, want at least %v", got, tt.delay)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("still waiting after 30s, want no wait")
			}
		})
	}
}
