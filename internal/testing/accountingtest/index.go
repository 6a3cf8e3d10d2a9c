package accountingtest

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/testkit"
)

// Persons are the persons the tests disclose.
var Persons = []string{
	"11111111-1111-4111-8111-111111111111",
	"22222222-2222-4222-8222-222222222222",
	"33333333-3333-4333-8333-333333333333",
}

// WriteLedger discloses n answers through a ledger on nc, from 8 callers at
// once, each of one to three persons, at times a second apart, and returns
// once all are stored.
func WriteLedger(t *testing.T, nc *nats.Conn, replica string, n int) {
	t.Helper()
	var mu sync.Mutex
	tick := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l, err := ledger.New(nc, ledger.Config{Replica: replica, MaxMessageRecords: 5, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		tick = tick.Add(time.Second)
		return tick
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close(context.Background()) }()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				d := events.Disclosure{RequestID: fmt.Sprintf("%s-%d", replica, i), Operation: "getAuthorizedSigners", Purpose: "TREAT"}
				for j := 0; j <= i%3; j++ {
					d.Persons = append(d.Persons, events.DisclosedPerson{ID: Persons[(i+j)%3], SSNMode: "LAST4"})
				}
				errs <- l.Disclose(t.Context(), d)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Disclose: %v", err)
		}
	}
}

// OpenIndex opens an index in a new directory, closed when the test ends.
func OpenIndex(t *testing.T) *accounting.Index {
	t.Helper()
	x, err := accounting.Open(t.TempDir(), accounting.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// Follow runs x.Follow until the test ends, and waits until x has applied
// the stream's last message (CaughtUp). One follower an index: to wait for
// what was written later, call CaughtUp.
func Follow(t *testing.T, x *accounting.Index, js jetstream.JetStream) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.Follow(ctx, js, ledger.DefaultStream) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Follow: %v", err)
		}
	})
	CaughtUp(t, x, js)
}

// CaughtUp waits until x has applied the stream's last message.
func CaughtUp(t *testing.T, x *accounting.Index, js jetstream.JetStream) {
	t.Helper()
	s, err := js.Stream(context.Background(), ledger.DefaultStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, 10*time.Second, func() error {
		pos, err := x.Position()
		if err != nil {
			return err
		}
		if pos < info.State.LastSeq {
			return fmt.Errorf("index at %d, stream at %d", pos, info.State.LastSeq)
		}
		return nil
	})
}

// SearchAll returns every record of q, page after page.
func SearchAll(t *testing.T, x *accounting.Index, q accounting.Query) []ledger.Record {
	t.Helper()
	var all []ledger.Record
	for pages := 0; ; pages++ {
		recs, next, err := x.Search(q)
		if err != nil {
			t.Fatalf("Search: %v", err)
		}
		if len(recs) > q.Limit && q.Limit > 0 {
			t.Fatalf("page of %d records, limit %d", len(recs), q.Limit)
		}
		all = append(all, recs...)
		if next == "" {
			return all
		}
		if pages > 1000 {
			t.Fatal("no last page")
		}
		q.After = next
	}
}

// IDs returns where each record is stored, sorted.
func IDs(recs []ledger.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%s-%d-%d %s %s", r.Chain, r.Seq, r.Index, r.RequestID, r.PersonID)
	}
	sort.Strings(out)
	return out
}
