// Polling: it polls a condition in tests, so that no test sleeps a
// guessed time: it checks often at first, then backs off to a ceiling.

package testkit

import (
	"testing"
	"time"
)

// maxInterval is the longest pause between two checks.
const maxInterval = 50 * time.Millisecond

// WaitFor calls cond until it returns nil, and fails the test with cond's last
// error if that has not happened within timeout. The first check is
// immediate; the pauses between checks double from 1ms up to 50ms.
func WaitFor(t testing.TB, timeout time.Duration, cond func() error) {
	t.Helper()
	if err := WaitUntil(timeout, cond); err != nil {
		t.Fatalf("condition not met after %v: %v", timeout, err)
	}
}

// WaitUntil is For without a test: it returns nil once cond returns nil, or
// cond's last error when timeout has passed.
func WaitUntil(timeout time.Duration, cond func() error) error {
	deadline := time.Now().Add(timeout)
	pause := time.Millisecond
	for {
		err := cond()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(pause)
		pause = min(2*pause, maxInterval)
	}
}
