package accounting

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/testkit"
)

// runFollower runs a follower of x until the test ends.
func runFollower(t *testing.T, x *Index, js jetstream.JetStream) *Follower {
	t.Helper()
	f, err := NewFollower(x, js, ledger.DefaultStream, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return f
}

// waitApplied waits until f has applied the audit stream's last message.
func waitApplied(t *testing.T, f *Follower, js jetstream.JetStream) uint64 {
	t.Helper()
	s, err := js.Stream(t.Context(), ledger.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	last := s.CachedInfo().State.LastSeq
	testkit.WaitFor(t, 10*time.Second, func() error {
		if p := f.Progress(); p.AppliedSeq < last {
			return fmt.Errorf("applied %d, stream at %d", p.AppliedSeq, last)
		}
		return nil
	})
	return last
}

func TestFollowerWaitsForTheStreamThenCatchesUp(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	x := openIndex(t)
	f := runFollower(t, x, js)
	reg := prometheus.NewRegistry()
	if err := f.Register(reg); err != nil {
		t.Fatal(err)
	}
	if p := f.Progress(); p.CaughtUp || p.Connected {
		t.Errorf("without the audit stream: progress %+v, want neither caught up nor connected", p)
	}
	writeLedger(t, nc, "a", 20) // creates the stream
	testkit.WaitFor(t, 10*time.Second, func() error {
		select {
		case <-f.CaughtUp():
			return nil
		default:
			return errors.New("not caught up")
		}
	})
	writeLedger(t, nc, "b", 20)
	last := waitApplied(t, f, js)
	if p := f.Progress(); !p.Connected || p.StreamLastSeq != last || f.Lag() != 0 {
		t.Errorf("progress %+v, lag %d; want connected, stream last %d, lag 0", p, f.Lag(), last)
	}
	if n, err := testutil.GatherAndCount(reg, MetricIndexLag); err != nil || n != 1 {
		t.Fatalf("%s: %d series, %v", MetricIndexLag, n, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == MetricIndexLag && mf.GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Errorf("%s = %v once caught up, want 0", MetricIndexLag, mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
}

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

func TestLedgerRecorderRecordsTheSearch(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	l, err := ledger.New(nc, ledger.Config{Replica: "accounting-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	acc := Access{RequestID: "r-1", Caller: auth.Caller{Subject: "auditor", Client: "compliance"}, Purpose: "HACCOUNT", Person: persons[0]}
	if err := LedgerRecorder(l)(t.Context(), acc); err != nil {
		t.Fatal(err)
	}
	recs, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, persons[0], time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Operation != OperationSearch || r.Subject != "auditor" || r.Client != "compliance" || r.Purpose != "HACCOUNT" ||
		r.RequestID != "r-1" || r.SSNMode != "" || r.DOBDisclosed || r.Replica != "accounting-1" {
		t.Errorf("record %+v, want the search by auditor, nothing disclosed", r)
	}
}
