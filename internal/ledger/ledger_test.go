package ledger

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lookup/persons/internal/testing/testkit"
)

const (
	personA = "11111111-1111-4111-8111-111111111111"
	personB = "22222222-2222-4222-8222-222222222222"
)

func TestLedgerRequiredStoresOneRecordPerPersonBeforeReturning(t *testing.T) {
	nc, js := runNATS(t)
	l := newLedger(t, nc, Config{Position: func() uint64 { return 42 }})
	ctx := t.Context()
	if err := l.Disclose(ctx, disclosure("req-1", personA, personB)); err != nil {
		t.Fatalf("Disclose: %v", err)
	}
	// Required: the records are stored when Disclose returns, in one
	// message.
	if got := streamMsgs(t, js); got != 1 {
		t.Fatalf("stream holds %d messages, want 1", got)
	}
	recs, err := ScanPerson(ctx, js, DefaultStream, personB, time.Time{}, time.Time{})
	if err != nil {
		t.Fatalf("Accounting: %v", err)
	}
	if len(recs) != 1 {
		t.Fatalf("person B has %d records, want 1", len(recs))
	}
	r := recs[0]
	want := Record{RequestID: "req-1", Subject: "user-1", Client: "app-1", Operation: "getAuthorizedSigners",
		PersonID: personB, SSNMode: "LAST4", DOBDisclosed: true, Purpose: "TREAT", Persons: 2, Replica: "r1",
		ReadModelSeq: 42, Chain: "r1", Seq: 1, Index: 2, Time: r.Time}
	if fmt.Sprint(r) != fmt.Sprint(want) {
		t.Errorf("record = %+v\nwant     %+v", r, want)
	}
}

func TestLedgerConcurrentDisclosuresFormOneIntactChain(t *testing.T) {
	nc, js := runNATS(t)
	l := newLedger(t, nc, Config{})
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- l.Disclose(t.Context(), disclosure(fmt.Sprintf("req-%d", i), personA))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Disclose: %v", err)
		}
	}
	rep, err := Verify(t.Context(), js, DefaultStream)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if !rep.OK() || rep.Records != n || len(rep.Chains) != 1 || rep.Chains[0].Last != uint64(rep.Messages) {
		t.Fatalf("Verify = %+v, want %d records in one intact chain", rep, n)
	}
}

func TestLedgerRequiredFailsWithoutTheStream(t *testing.T) {
	nc, js := runNATS(t)
	l := newLedger(t, nc, Config{AckTimeout: 500 * time.Millisecond})
	ctx := t.Context()
	if err := l.Disclose(ctx, disclosure("req-1", personA)); err != nil {
		t.Fatalf("Disclose with the stream: %v", err)
	}
	if err := js.DeleteStream(ctx, DefaultStream); err != nil {
		t.Fatalf("delete stream: %v", err)
	}
	// The server may still take a record while it tears the stream down:
	// wait for the first refusal, then every disclosure must fail.
	testkit.WaitFor(t, 10*time.Second, func() error {
		if err := l.Disclose(ctx, disclosure("req-w", personA)); err == nil {
			return errors.New("Disclose without the stream = nil, want an error")
		}
		return nil
	})
	for i := 0; i < 3; i++ {
		if err := l.Disclose(ctx, disclosure("req-x", personA)); err == nil {
			t.Fatal("Disclose without the stream = nil, want an error")
		}
	}
	// The ledger does not re-create a stream deleted under it.
	if _, err := js.Stream(ctx, DefaultStream); err == nil {
		t.Error("the audit stream was re-created")
	}
}

func TestLedgerBestEffortCountsFailures(t *testing.T) {
	nc, js := runNATS(t)
	reg := prometheus.NewRegistry()
	l := newLedger(t, nc, Config{Mode: BestEffort, Registerer: reg, AckTimeout: 500 * time.Millisecond})
	ctx := t.Context()
	if err := l.Disclose(ctx, disclosure("req-1", personA)); err != nil {
		t.Fatalf("Disclose: %v", err)
	}
	waitFor(t, "the record stored", func() bool { return testutil.ToFloat64(l.metrics.records.WithLabelValues("stored")) == 1 })
	if err := js.DeleteStream(ctx, DefaultStream); err != nil {
		t.Fatalf("delete stream: %v", err)
	}
	// The server may still take a batch while it tears the stream down:
	// disclose again until the failures show; best effort never refuses.
	waitFor(t, "the failures counted", func() bool {
		if err := l.Disclose(ctx, disclosure("req-2", personA, personB)); err != nil {
			t.Fatalf("best-effort Disclose = %v, want nil", err)
		}
		return testutil.ToFloat64(l.metrics.records.WithLabelValues("failed")) >= 2
	})
}

func TestLedgerOffRecordsNothing(t *testing.T) {
	l, err := New(nil, Config{Mode: Off})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := l.Disclose(t.Context(), disclosure("req-1", personA)); err != nil {
		t.Errorf("Disclose = %v, want nil", err)
	}
	if err := l.Close(t.Context()); err != nil {
		t.Errorf("Close = %v", err)
	}
}

func TestLedgerClosedRefuses(t *testing.T) {
	nc, _ := runNATS(t)
	l := newLedger(t, nc, Config{})
	if err := l.Close(t.Context()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := l.Disclose(t.Context(), disclosure("req-1", personA)); !errors.Is(err, ErrClosed) {
		t.Errorf("Disclose after Close = %v, want ErrClosed", err)
	}
}

func TestParseMode(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Mode
		wantErr bool
	}{{"required", Required, false}, {"best-effort", BestEffort, false}, {"off", Off, false}, {"on", "", true}} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseMode(tc.in)
			if got != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("ParseMode(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestLedgerStoresWithAndWithoutBatchPublishing(t *testing.T) {
	withAndWithoutBatchPublish(t, nil, func(t *testing.T, nc *nats.Conn, js jetstream.JetStream, batched bool) {
		l := newLedger(t, nc, Config{})
		const n = 50
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs <- l.Disclose(t.Context(), disclosure(fmt.Sprint("req-", i), personA, personB))
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("Disclose: %v", err)
			}
		}
		if l.batched.Load() != batched {
			t.Errorf("ledger batched = %v, want %v", l.batched.Load(), batched)
		}
		rep, err := Verify(t.Context(), js, DefaultStream)
		if err != nil {
			t.Fatal(err)
		}
		if !rep.OK() || rep.Records != 2*n {
			t.Errorf("Verify = %+v, want %d records, no problem", rep, 2*n)
		}
	})
}

func TestLedgerRequiredFailsWhenTheStreamRefusesARecord(t *testing.T) {
	limit := func(cfg *jetstream.StreamConfig) {
		cfg.MaxMsgs = 1 // discard new: the second message is refused
	}
	withAndWithoutBatchPublish(t, limit, func(t *testing.T, nc *nats.Conn, _ jetstream.JetStream, _ bool) {
		l := newLedger(t, nc, Config{AckTimeout: time.Second})
		if err := l.Disclose(t.Context(), disclosure("req-1", personA, personB)); err != nil {
			t.Fatalf("Disclose within the limit: %v", err)
		}
		if err := l.Disclose(t.Context(), disclosure("req-2", personA, personB)); err == nil {
			t.Fatal("Disclose beyond the limit = nil, want an error")
		}
	})
}

func TestLedgerRequiredFailsAtOnceWithoutNATS(t *testing.T) {
	ns := testkit.RunNATS(t, nil)
	nc, _ := testkit.ConnectNATS(t, ns.ClientURL(), nats.MaxReconnects(-1))
	l := newLedger(t, nc, Config{AckTimeout: 10 * time.Second})
	if err := l.Disclose(t.Context(), disclosure("req-1", personA)); err != nil {
		t.Fatalf("Disclose: %v", err)
	}
	ns.Shutdown()
	ns.WaitForShutdown()
	waitFor(t, "the connection to drop", func() bool { return !nc.IsConnected() })
	start := time.Now()
	if err := l.Disclose(t.Context(), disclosure("req-2", personA)); err == nil {
		t.Fatal("Disclose without NATS = nil, want an error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Disclose without NATS took %v, want an error at once", d)
	}
}

// TestLedgerSplitsADisclosureLargerThanAMessage: a disclosure of more
// records than a message holds is stored in consecutive messages, and
// released once the last is acknowledged.
func TestLedgerSplitsADisclosureLargerThanAMessage(t *testing.T) {
	withAndWithoutBatchPublish(t, nil, func(t *testing.T, nc *nats.Conn, js jetstream.JetStream, _ bool) {
		l := newLedger(t, nc, Config{MaxMessageRecords: 3})
		var persons []string
		for i := range 10 {
			persons = append(persons, fmt.Sprintf("%08d-0000-4000-8000-000000000000", i))
		}
		if err := l.Disclose(t.Context(), disclosure("big", persons...)); err != nil {
			t.Fatalf("Disclose: %v", err)
		}
		if got := streamMsgs(t, js); got != 4 {
			t.Errorf("stream holds %d messages, want 4 (3+3+3+1 records)", got)
		}
		rep, err := Verify(t.Context(), js, DefaultStream)
		if err != nil || !rep.OK() || rep.Records != 10 {
			t.Errorf("Verify = %+v, %v; want 10 records, no problem", rep, err)
		}
		recs, err := ScanPerson(t.Context(), js, DefaultStream, persons[9], time.Time{}, time.Time{})
		if err != nil || len(recs) != 1 || recs[0].Seq != 4 || recs[0].Index != 1 || recs[0].Persons != 10 {
			t.Errorf("Accounting of the last person = %+v, %v; want its record, message 4, index 1", recs, err)
		}
	})
}

// TestLedgerLoneDisclosuresShareAnOpenBatch: disclosures one at a time
// are appended to the batch the first started while it is younger than
// BatchMaxAge (only its first message names the chain's last stored
// message); a batch that old is ended as soon as nothing is in flight, and
// the next disclosure starts a batch of its own. Either way every record
// is stored, once, in one intact chain.
func TestLedgerLoneDisclosuresShareAnOpenBatch(t *testing.T) {
	tests := []struct {
		name        string
		maxAge      time.Duration
		wantStarted int // messages naming the chain's last stored message
	}{
		{"young batch", time.Hour, 1},
		{"batch old at once", time.Nanosecond, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc, js := runNATS(t)
			l := newLedger(t, nc, Config{BatchMaxAge: tt.maxAge})
			fill(t, l, 5)
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			if err := l.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
			s, err := js.Stream(ctx, DefaultStream)
			if err != nil {
				t.Fatal(err)
			}
			started := 0
			for seq := uint64(1); seq <= 5; seq++ {
				m, err := s.GetMsg(ctx, seq)
				if err != nil {
					t.Fatalf("message %d: %v", seq, err)
				}
				if m.Header.Get(expectedLastSubjSeq) != "" {
					started++
				}
			}
			if started != tt.wantStarted {
				t.Errorf("messages naming the chain's last = %d, want %d", started, tt.wantStarted)
			}
			if _, err := s.GetMsg(ctx, 6); err == nil {
				t.Error("a sixth message stored, want 5")
			}
			rep, err := Verify(ctx, js, DefaultStream)
			if err != nil || len(rep.Problems) > 0 {
				t.Errorf("Verify = %v, %q; want an intact chain", err, rep.Problems)
			}
		})
	}
}
