package admin

import (
	"errors"
	"testing"
	"time"

	"github.com/lookup/persons/internal/natsconn"
	"github.com/lookup/persons/projector"
)

// fakeSource is a Source with function fields.
type fakeSource struct {
	progress func() projector.Progress
	caughtUp func() <-chan struct{}
}

func (f *fakeSource) Progress() projector.Progress { return f.progress() }
func (f *fakeSource) CaughtUp() <-chan struct{}    { return f.caughtUp() }

func TestIsStale(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	tests := []struct {
		name         string
		oldest, lost time.Time
		bound        time.Duration
		want         bool
	}{
		{name: "nothing pending, connected", bound: time.Second},
		{name: "pending within the bound", oldest: now.Add(-500 * time.Millisecond), bound: time.Second},
		{name: "pending beyond the bound", oldest: now.Add(-2 * time.Second), bound: time.Second, want: true},
		{name: "lost within the bound", lost: now.Add(-time.Second), bound: 2 * time.Second},
		{name: "lost beyond the bound", lost: now.Add(-3 * time.Second), bound: 2 * time.Second, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isStale(tt.oldest, tt.lost, now, tt.bound); got != tt.want {
				t.Errorf("isStale(%v, %v, bound %v) = %v, want %v", tt.oldest, tt.lost, tt.bound, got, tt.want)
			}
		})
	}
}

func TestReady(t *testing.T) {
	open := func() <-chan struct{} { return make(chan struct{}) }
	tests := []struct {
		name              string
		caughtUp          func() <-chan struct{}
		stale, refused    bool
		draining, noBound bool
		want              bool
	}{
		{name: "catching up", caughtUp: open},
		{name: "caught up", caughtUp: closedChan, want: true},
		{name: "caught up, no bound", caughtUp: closedChan, noBound: true, want: true},
		{name: "stale", caughtUp: closedChan, stale: true},
		{name: "credentials refused", caughtUp: closedChan, refused: true},
		{name: "draining", caughtUp: closedChan, draining: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &Readiness{Source: &fakeSource{caughtUp: tt.caughtUp}, Refused: func() bool { return tt.refused }}
			if !tt.noBound {
				r.Stale = func() bool { return tt.stale }
			}
			r.Draining.Store(tt.draining)
			if got := r.Ready(); got != tt.want {
				t.Errorf("Ready() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestReadinessFollowsNATSRefusal: a replica whose NATS server refuses its
// credentials after start-up is not ready until they are accepted again.
func TestReadinessFollowsNATSRefusal(t *testing.T) {
	src := &fakeSource{caughtUp: closedChan}
	var health natsconn.Health
	var c natsconn.Config
	health.Follow(&c)
	r := &Readiness{Source: src, Refused: health.Refused}
	if !r.Ready() {
		t.Fatal("not ready while caught up and accepted")
	}
	c.OnRefused(errors.New("authorization violation"))
	if r.Ready() {
		t.Error("ready while NATS refuses the credentials")
	}
	c.OnAccepted()
	if !r.Ready() {
		t.Error("not ready once the credentials are accepted again")
	}
}

// TestStalenessReusesItsVerdict: the verdict is reused for CheckInterval,
// and a bound of 0 is no check at all.
func TestStalenessReusesItsVerdict(t *testing.T) {
	now := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	var oldest time.Time
	calls := 0
	src := &fakeSource{progress: func() projector.Progress {
		calls++
		return projector.Progress{OldestUnappliedTime: oldest}
	}}
	clock := now
	if NewStaleness(src, 0, func() time.Time { return clock }) != nil {
		t.Fatal("NewStaleness with bound 0 is not nil (off)")
	}
	stale := NewStaleness(src, time.Minute, func() time.Time { return clock })
	oldest = now.Add(-2 * time.Minute)
	if !stale() {
		t.Fatal("2 minutes behind a bound of 1: not stale")
	}
	oldest = time.Time{}
	if !stale() || calls != 1 {
		t.Fatalf("within CheckInterval: verdict not reused (calls %d)", calls)
	}
	clock = clock.Add(StalenessCheckInterval)
	if stale() {
		t.Fatal("fresh again after CheckInterval: still stale")
	}
}
