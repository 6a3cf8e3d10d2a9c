package projector

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lookup/persons/internal/testing/testkit"

	"github.com/lookup/persons/events"
)

func TestPositionWait(t *testing.T) {
	tests := []struct {
		name    string
		start   uint64
		want    uint64
		advance []uint64 // advanced to, in order, after Wait started
		timeout time.Duration
		wantErr error
	}{
		{name: "already applied", start: 5, want: 5, timeout: time.Second},
		{name: "zero", want: 0, timeout: time.Second},
		{name: "woken by a commit", start: 1, want: 3, advance: []uint64{2, 3}, timeout: 10 * time.Second},
		{name: "woken by a commit beyond", start: 1, want: 3, advance: []uint64{7}, timeout: 10 * time.Second},
		{name: "not reached", start: 1, want: 3, advance: []uint64{2}, timeout: 50 * time.Millisecond, wantErr: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p Position
			p.advance(tt.start)
			ctx, cancel := context.WithTimeout(t.Context(), tt.timeout)
			defer cancel()
			errc := make(chan error, 1)
			go func() { errc <- p.Wait(ctx, tt.want) }()
			for _, a := range tt.advance {
				p.advance(a)
			}
			if err := <-errc; !errors.Is(err, tt.wantErr) {
				t.Fatalf("Wait(%d) = %v, want %v", tt.want, err, tt.wantErr)
			}
		})
	}
}

func TestPositionNeverDecreases(t *testing.T) {
	var p Position
	for _, seq := range []uint64{3, 9, 4, 0, 9} {
		p.advance(seq)
	}
	if got := p.Applied(); got != 9 {
		t.Fatalf("Applied() = %d, want 9", got)
	}
}

// TestPositionConcurrentWaiters: many waiters for sequences a commit at a
// time passes all return once their sequence is applied.
func TestPositionConcurrentWaiters(t *testing.T) {
	var p Position
	const n = 200
	errc := make(chan error, n)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for i := range n {
		go func() { errc <- p.Wait(ctx, uint64(i%50+1)) }()
	}
	for seq := uint64(1); seq <= 50; seq++ {
		p.advance(seq)
	}
	for range n {
		if err := <-errc; err != nil {
			t.Fatalf("Wait: %v", err)
		}
	}
}

// TestProjectorPosition: the position follows the commits, waits are woken
// by them, each event's publish-to-visible time is observed, and a new
// projector on the store starts at its checkpoint.
func TestProjectorPosition(t *testing.T) {
	js := setup(t)
	s := openStore(t, t.TempDir(), StoreOptions{})
	var observed atomic.Int64
	p := New(js, s, Config{ObserveVisible: func(d time.Duration) {
		if d >= 0 {
			observed.Add(1)
		}
	}})
	if got := p.Position().Applied(); got != 0 {
		t.Fatalf("fresh Position().Applied() = %d, want 0", got)
	}
	stop := runProjector(t, p)
	var msgs []wireMsg
	for i := range 20 {
		msgs = append(msgs, encodeMsg(t, events.Event{EntityVersion: 1, Data: events.Consumer{
			ConsumerID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), BusinessID: testBiz, FirstName: "A", LastName: "B"}}))
	}
	publishAll(t, js, msgs)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := p.Position().Wait(ctx, 20); err != nil {
		t.Fatalf("Wait(20): %v", err)
	}
	if got, cp := p.Position().Applied(), p.Progress().AppliedSeq; got != 20 || cp != 20 {
		t.Fatalf("Applied() = %d, checkpoint %d, want 20", got, cp)
	}
	if got := observed.Load(); got != 20 {
		t.Errorf("publish-to-visible observed %d times, want 20", got)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := New(js, s, Config{}).Position().Applied(); got != 20 {
		t.Errorf("restarted Position().Applied() = %d, want 20", got)
	}
}

// TestProgressFreshness: a projector that cannot apply the events beyond a
// sequence reports the stream timestamp of the oldest one; one that lost
// NATS reports since when.
func TestProgressFreshness(t *testing.T) {
	srv := startServer(t, t.TempDir(), -1)
	js := connect(t, srv.ClientURL())
	createStream(t, js)
	s := openStore(t, t.TempDir(), StoreOptions{})
	p := newProjector(js, s, Config{RefreshInterval: 20 * time.Millisecond}, withReadFault(func(seq uint64) error {
		if seq > 2 {
			return errors.New("stuck")
		}
		return nil
	}))
	runProjector(t, p)
	before := time.Now()
	var msgs []wireMsg
	for i := range 4 {
		msgs = append(msgs, encodeMsg(t, events.Event{EntityVersion: 1, Data: events.Consumer{
			ConsumerID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), BusinessID: testBiz, FirstName: "A", LastName: "B"}}))
	}
	publishAll(t, js, msgs)
	waitApplied(t, p, 2, 20*time.Second)
	testkit.WaitFor(t, 20*time.Second, func() error {
		pr := p.Progress()
		if pr.OldestUnappliedTime.IsZero() || pr.OldestUnappliedTime.Before(before.Add(-time.Second)) {
			return fmt.Errorf("OldestUnappliedTime = %v, want about %v", pr.OldestUnappliedTime, before)
		}
		return nil
	})
	if pr := p.Progress(); !pr.UnreachableSince.IsZero() {
		t.Fatalf("UnreachableSince = %v while connected, want zero", pr.UnreachableSince)
	}
	srv.Shutdown()
	testkit.WaitFor(t, 20*time.Second, func() error {
		pr := p.Progress()
		if pr.Connected || pr.UnreachableSince.IsZero() {
			return fmt.Errorf("Connected %v, UnreachableSince %v after NATS stopped", pr.Connected, pr.UnreachableSince)
		}
		return nil
	})
}

// TestPauseResume: a paused projector applies nothing more, while its
// progress still shows the events it has not applied; resumed, it applies
// them.
func TestPauseResume(t *testing.T) {
	js := setup(t)
	p := New(js, openStore(t, t.TempDir(), StoreOptions{}), Config{RefreshInterval: 20 * time.Millisecond})
	runProjector(t, p)
	consumer := func(i int) wireMsg {
		return encodeMsg(t, events.Event{EntityVersion: 1, Data: events.Consumer{
			ConsumerID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), BusinessID: testBiz, FirstName: "A", LastName: "B"}})
	}
	publishAll(t, js, []wireMsg{consumer(1), consumer(2)})
	waitApplied(t, p, 2, 20*time.Second)

	p.Pause()
	p.Pause() // a second pause changes nothing
	publishAll(t, js, []wireMsg{consumer(3), consumer(4)})
	testkit.WaitFor(t, 20*time.Second, func() error {
		pr := p.Progress()
		if pr.StreamLastSeq != 4 || pr.OldestUnappliedTime.IsZero() {
			return fmt.Errorf("stream last seq %d, oldest unapplied %v: the refresh has not seen the new events", pr.StreamLastSeq, pr.OldestUnappliedTime)
		}
		return nil
	})
	// The refresh has run several times since the events were stored, and
	// the consumer has had them since then too.
	if got := p.Position().Applied(); got != 2 {
		t.Fatalf("a paused projector applied up to %d, want 2", got)
	}
	p.Resume()
	p.Resume() // a second resume changes nothing
	waitApplied(t, p, 4, 20*time.Second)
}
