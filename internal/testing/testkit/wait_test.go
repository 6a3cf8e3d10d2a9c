package testkit

import (
	"errors"
	"testing"
	"time"
)

func TestUntil(t *testing.T) {
	t.Run("met after a few checks", func(t *testing.T) {
		n := 0
		err := WaitUntil(5*time.Second, func() error {
			n++
			if n < 3 {
				return errors.New("not yet")
			}
			return nil
		})
		if err != nil || n != 3 {
			t.Fatalf("got err %v after %d checks, want nil after 3", err, n)
		}
	})
	t.Run("never met returns the last error", func(t *testing.T) {
		want := errors.New("never")
		if got := WaitUntil(20*time.Millisecond, func() error { return want }); !errors.Is(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
	})
}
