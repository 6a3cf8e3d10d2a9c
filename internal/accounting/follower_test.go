package accounting_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

// runFollower runs a follower of x until the test ends.
func runFollower(t *testing.T, x *accounting.Index, js jetstream.JetStream) *accounting.Follower {
	t.Helper()
	f, err := accounting.NewFollower(x, js, ledger.DefaultStream, nil)
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
func waitApplied(t *testing.T, f *accounting.Follower, js jetstream.JetStream) uint64 {
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
	x := accountingtest.OpenIndex(t)
	f := runFollower(t, x, js)
	reg := prometheus.NewRegistry()
	if err := f.Register(reg); err != nil {
		t.Fatal(err)
	}
	if p := f.Progress(); p.CaughtUp || p.Connected {
		t.Errorf("without the audit stream: progress %+v, want neither caught up nor connected", p)
	}
	accountingtest.WriteLedger(t, nc, "a", 20) // creates the stream
	testkit.WaitFor(t, 10*time.Second, func() error {
		select {
		case <-f.CaughtUp():
			return nil
		default:
			return errors.New("not caught up")
		}
	})
	accountingtest.WriteLedger(t, nc, "b", 20)
	last := waitApplied(t, f, js)
	if p := f.Progress(); !p.Connected || p.StreamLastSeq != last || f.Lag() != 0 {
		t.Errorf("progress %+v, lag %d; want connected, stream last %d, lag 0", p, f.Lag(), last)
	}
	if n, err := testutil.GatherAndCount(reg, accounting.MetricIndexLag); err != nil || n != 1 {
		t.Fatalf("%s: %d series, %v", accounting.MetricIndexLag, n, err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == accounting.MetricIndexLag && mf.GetMetric()[0].GetGauge().GetValue() != 0 {
			t.Errorf("%s = %v once caught up, want 0", accounting.MetricIndexLag, mf.GetMetric()[0].GetGauge().GetValue())
		}
	}
}

func TestLedgerRecorderRecordsTheSearch(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	l, err := ledger.New(nc, ledger.Config{Replica: "accounting-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close(context.Background()) })
	acc := accounting.Access{RequestID: "r-1", Caller: auth.Caller{Subject: "auditor", Client: "compliance"}, Purpose: "HACCOUNT", Person: accountingtest.Persons[0]}
	if err := accounting.LedgerRecorder(l)(t.Context(), acc); err != nil {
		t.Fatal(err)
	}
	recs, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, accountingtest.Persons[0], time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	r := recs[0]
	if r.Operation != accounting.OperationSearch || r.Subject != "auditor" || r.Client != "compliance" || r.Purpose != "HACCOUNT" ||
		r.RequestID != "r-1" || r.SSNMode != "" || r.DOBDisclosed || r.Replica != "accounting-1" {
		t.Errorf("record %+v, want the search by auditor, nothing disclosed", r)
	}
}

// TestFollowerRebuildsForANewStream: an index that followed the audit
// stream, the stream deleted and created again with other records, is
// emptied by its follower and rebuilt from the new stream (decisions
// 0012 and 0021: a read model belongs to one incarnation of its stream).
func TestFollowerRebuildsForANewStream(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 30)
	x := accountingtest.OpenIndex(t)
	f := runFollower(t, x, js)
	waitApplied(t, f, js)
	if err := js.DeleteStream(t.Context(), ledger.DefaultStream); err != nil {
		t.Fatal(err)
	}
	accountingtest.WriteLedger(t, nc, "b", 6) // a new stream, of fewer messages
	s, err := js.Stream(t.Context(), ledger.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	last := s.CachedInfo().State.LastSeq
	testkit.WaitFor(t, 10*time.Second, func() error {
		pos, err := x.Position()
		if err != nil || pos != last {
			return fmt.Errorf("index at %d (%w), the new stream at %d", pos, err, last)
		}
		diff, err := x.CompareWithStream(t.Context(), js, ledger.DefaultStream)
		if err != nil || len(diff) > 0 {
			return fmt.Errorf("the index differs from the new stream (%w): %v", err, diff)
		}
		return nil
	})
}
