package accounting

import (
	"log/slog"
	"testing"
	"time"
)

func TestFollowerLagCountsPendingMessages(t *testing.T) {
	f := &Follower{caughtUp: make(chan struct{}), log: slog.New(slog.DiscardHandler)}
	for _, tc := range []struct {
		name             string
		event            func()
		wantLag          uint64
		wantCaughtUp     bool
		wantTarget       uint64
		wantAppliedSeq   uint64
		wantStreamLastSq uint64
	}{
		{"connected behind", func() { f.connected(0, 10, time.Time{}) }, 10, false, 10, 0, 10},
		{"part applied", func() { f.committed(4, 6) }, 6, false, 10, 4, 10},
		{"more arrived", func() { f.committed(8, 7) }, 7, false, 10, 8, 15},
		{"target passed", func() { f.committed(15, 0) }, 0, true, 10, 15, 15},
		{"reconnected", func() { f.connected(15, 20, time.Time{}) }, 5, true, 10, 15, 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.event()
			p := f.Progress()
			if f.Lag() != tc.wantLag || p.CaughtUp != tc.wantCaughtUp || p.TargetSeq != tc.wantTarget ||
				p.AppliedSeq != tc.wantAppliedSeq || p.StreamLastSeq != tc.wantStreamLastSq {
				t.Errorf("lag %d, progress %+v; want lag %d, caught up %v, target %d, applied %d, stream last %d",
					f.Lag(), p, tc.wantLag, tc.wantCaughtUp, tc.wantTarget, tc.wantAppliedSeq, tc.wantStreamLastSq)
			}
		})
	}
}
