package signercheck_test

import (
	"testing"
	"time"

	"github.com/lookup/persons/lookuptest"
)

// inProcess is lookupd in the test's process.
type inProcess struct{ *lookuptest.Server }

// stale pauses the events and publishes one: once it is older than the
// staleness bound, every read is stale.
func (s inProcess) stale(t *testing.T) {
	s.PauseEvents()
	if _, err := s.Publish(t.Context(), guardian(t, 9, "ACTIVE")); err != nil {
		t.Fatal(err)
	}
}

func TestInProcess(t *testing.T) {
	srv := lookuptest.New(t, lookuptest.WithMaxStaleness(500*time.Millisecond),
		lookuptest.WithMaxPositionWait(100*time.Millisecond))
	runSuite(t, inProcess{srv})
}
