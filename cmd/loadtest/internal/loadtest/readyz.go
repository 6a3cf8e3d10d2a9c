package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// WaitCaughtUp polls /readyz on the admin listener at admin until it says
// ready with seq applied, reporting progress every 10 seconds, and returns
// how long that took. It gives up after 30 minutes.
func WaitCaughtUp(ctx context.Context, c *http.Client, admin string, seq uint64, progress io.Writer) (time.Duration, error) {
	start := time.Now()
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	var last uint64
	for report := start.Add(10 * time.Second); ; {
		ready, applied, err := Readyz(c, admin)
		if err == nil && ready && applied >= seq {
			took := time.Since(start)
			fmt.Fprintf(progress, "lookupd serve caught up with %d events in %v\n", seq, took.Round(time.Second))
			return took, nil
		}
		if err == nil {
			last = applied
		}
		if time.Now().After(report) {
			fmt.Fprintf(progress, "  applied %d of %d\n", last, seq)
			report = time.Now().Add(10 * time.Second)
		}
		if time.Since(start) > 30*time.Minute {
			return 0, fmt.Errorf("lookupd serve applied %d of %d events in 30 minutes", last, seq)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// Readyz returns what /readyz says: ready, and the applied sequence.
func Readyz(c *http.Client, admin string) (bool, uint64, error) {
	resp, err := c.Get(admin + "/readyz") //nolint:gosec // G704: the admin listener of a lookupd this tool started
	if err != nil {
		return false, 0, err
	}
	defer resp.Body.Close()
	var body struct {
		Ready   bool   `json:"ready"`
		Applied uint64 `json:"applied_sequence"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return false, 0, fmt.Errorf("/readyz: %w", err)
	}
	return body.Ready, body.Applied, nil
}
