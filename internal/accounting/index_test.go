package accounting

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/testkit"
)

// persons are the persons the tests disclose.
var persons = []string{
	"11111111-1111-4111-8111-111111111111",
	"22222222-2222-4222-8222-222222222222",
	"33333333-3333-4333-8333-333333333333",
}

// writeLedger discloses n answers through a ledger on nc, from 8 callers at
// once, each of one to three persons, at times a second apart, and returns
// once all are stored.
func writeLedger(t *testing.T, nc *nats.Conn, replica string, n int) {
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
					d.Persons = append(d.Persons, events.DisclosedPerson{ID: persons[(i+j)%3], SSNMode: "LAST4"})
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

// follow runs x.Follow until the test ends, and waits until x has applied
// the stream's last message (caughtUp). One follower an index: to wait for
// what was written later, call caughtUp.
func follow(t *testing.T, x *Index, js jetstream.JetStream) {
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
	caughtUp(t, x, js)
}

// caughtUp waits until x has applied the stream's last message.
func caughtUp(t *testing.T, x *Index, js jetstream.JetStream) {
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

// searchAll returns every record of q, page after page.
func searchAll(t *testing.T, x *Index, q Query) []ledger.Record {
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

// ids returns where each record is stored, sorted.
func ids(recs []ledger.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%s-%d-%d %s %s", r.Chain, r.Seq, r.Index, r.RequestID, r.PersonID)
	}
	sort.Strings(out)
	return out
}

func TestIndexEqualsAFullScan(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	writeLedger(t, nc, "a", 60)
	x := openIndex(t)
	follow(t, x, js)
	writeLedger(t, nc, "b", 40) // while following
	caughtUp(t, x, js)
	for _, p := range persons {
		t.Run(p, func(t *testing.T) {
			scan, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, p, time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			got := searchAll(t, x, Query{Person: p, Limit: 7})
			if fmt.Sprint(ids(got)) != fmt.Sprint(ids(scan)) || len(got) == 0 {
				t.Errorf("index: %d records, full scan: %d\nindex %v\nscan  %v", len(got), len(scan), ids(got), ids(scan))
			}
			for i := 1; i < len(got); i++ {
				if got[i].Time.After(got[i-1].Time) {
					t.Fatalf("record %d (%v) newer than record %d (%v): want newest first", i, got[i].Time, i-1, got[i-1].Time)
				}
			}
		})
	}
	t.Run("every person", func(t *testing.T) {
		diff, err := x.CompareWithStream(t.Context(), js, ledger.DefaultStream)
		if err != nil {
			t.Fatal(err)
		}
		if len(diff) > 0 {
			t.Errorf("the index differs from a full scan of the stream:\n%s", strings.Join(diff, "\n"))
		}
	})
}

func TestIndexResumesAfterReopen(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	dir := t.TempDir()
	writeLedger(t, nc, "a", 30)
	x, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- x.Follow(ctx, js, ledger.DefaultStream) }()
	testkit.WaitFor(t, 10*time.Second, func() error {
		if pos, _ := x.Position(); pos == 0 {
			return errors.New("nothing applied yet")
		}
		return nil
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Follow: %v", err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	writeLedger(t, nc, "b", 30)
	if x, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	follow(t, x, js)
	scan, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, persons[0], time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := searchAll(t, x, Query{Person: persons[0]}); fmt.Sprint(ids(got)) != fmt.Sprint(ids(scan)) {
		t.Errorf("after a reopen the index holds %d records of %s, the stream %d", len(got), persons[0], len(scan))
	}
}

func TestSearchBoundsAndCursor(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	writeLedger(t, nc, "a", 30)
	x := openIndex(t)
	follow(t, x, js)
	all := searchAll(t, x, Query{Person: persons[1]}) // newest first, each at a time of its own
	since, until := all[len(all)-3].Time, all[2].Time // all but the two oldest; all but the two newest
	for _, tc := range []struct {
		name string
		q    Query
		want int
	}{
		{"all", Query{Person: persons[1]}, len(all)},
		{"since", Query{Person: persons[1], Since: since}, len(all) - 2},
		{"until", Query{Person: persons[1], Until: until}, len(all) - 2},
		{"both", Query{Person: persons[1], Since: since, Until: until}, len(all) - 4},
		{"nobody", Query{Person: "44444444-4444-4444-8444-444444444444"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Limit = 2
			if got := searchAll(t, x, tc.q); len(got) != tc.want {
				t.Errorf("%d records, want %d", len(got), tc.want)
			}
		})
	}
	if _, _, err := x.Search(Query{Person: persons[1], After: "zz"}); !errors.Is(err, ErrBadCursor) {
		t.Errorf("Search with a bad cursor = %v, want ErrBadCursor", err)
	}
}

// openIndex opens an index in a new directory, closed when the test ends.
func openIndex(t *testing.T) *Index {
	t.Helper()
	x, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	return x
}

// TestFollowStoppedBeforeItReads: Follow stopped before it has its
// consumer (here, at once) returns nil, as when stopped while it waits.
func TestFollowStoppedBeforeItReads(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	writeLedger(t, nc, "a", 3)
	x := openIndex(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := x.Follow(ctx, js, ledger.DefaultStream); err != nil {
		t.Errorf("Follow with its context done: %v, want nil", err)
	}
}
