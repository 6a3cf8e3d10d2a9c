package accounting_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/testing/accountingtest"
	"github.com/lookup/persons/internal/testing/testkit"
)

func TestIndexEqualsAFullScan(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 60)
	x := accountingtest.OpenIndex(t)
	accountingtest.Follow(t, x, js)
	accountingtest.WriteLedger(t, nc, "b", 40) // while following
	accountingtest.CaughtUp(t, x, js)
	for _, p := range accountingtest.Persons {
		t.Run(p, func(t *testing.T) {
			scan, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, p, time.Time{}, time.Time{})
			if err != nil {
				t.Fatal(err)
			}
			got := accountingtest.SearchAll(t, x, accounting.Query{Person: p, Limit: 7})
			if fmt.Sprint(accountingtest.IDs(got)) != fmt.Sprint(accountingtest.IDs(scan)) || len(got) == 0 {
				t.Errorf("index: %d records, full scan: %d\nindex %v\nscan  %v", len(got), len(scan), accountingtest.IDs(got), accountingtest.IDs(scan))
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
	accountingtest.WriteLedger(t, nc, "a", 30)
	x, err := accounting.Open(dir, accounting.Options{})
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
	accountingtest.WriteLedger(t, nc, "b", 30)
	if x, err = accounting.Open(dir, accounting.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = x.Close() })
	accountingtest.Follow(t, x, js)
	scan, err := ledger.ScanPerson(t.Context(), js, ledger.DefaultStream, accountingtest.Persons[0], time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if got := accountingtest.SearchAll(t, x, accounting.Query{Person: accountingtest.Persons[0]}); fmt.Sprint(accountingtest.IDs(got)) != fmt.Sprint(accountingtest.IDs(scan)) {
		t.Errorf("after a reopen the index holds %d records of %s, the stream %d", len(got), accountingtest.Persons[0], len(scan))
	}
}

func TestSearchBoundsAndCursor(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 30)
	x := accountingtest.OpenIndex(t)
	accountingtest.Follow(t, x, js)
	all := accountingtest.SearchAll(t, x, accounting.Query{Person: accountingtest.Persons[1]}) // newest first, each at a time of its own
	since, until := all[len(all)-3].Time, all[2].Time                                          // all but the two oldest; all but the two newest
	for _, tc := range []struct {
		name string
		q    accounting.Query
		want int
	}{
		{"all", accounting.Query{Person: accountingtest.Persons[1]}, len(all)},
		{"since", accounting.Query{Person: accountingtest.Persons[1], Since: since}, len(all) - 2},
		{"until", accounting.Query{Person: accountingtest.Persons[1], Until: until}, len(all) - 2},
		{"both", accounting.Query{Person: accountingtest.Persons[1], Since: since, Until: until}, len(all) - 4},
		{"nobody", accounting.Query{Person: "44444444-4444-4444-8444-444444444444"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.q.Limit = 2
			if got := accountingtest.SearchAll(t, x, tc.q); len(got) != tc.want {
				t.Errorf("%d records, want %d", len(got), tc.want)
			}
		})
	}
	if _, _, err := x.Search(accounting.Query{Person: accountingtest.Persons[1], After: "zz"}); !errors.Is(err, accounting.ErrBadCursor) {
		t.Errorf("Search with a bad cursor = %v, want ErrBadCursor", err)
	}
}

// TestFollowStoppedBeforeItReads: Follow stopped before it has its
// consumer (here, at once) returns nil, as when stopped while it waits.
func TestFollowStoppedBeforeItReads(t *testing.T) {
	nc, js := testkit.StartNATS(t)
	accountingtest.WriteLedger(t, nc, "a", 3)
	x := accountingtest.OpenIndex(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := x.Follow(ctx, js, ledger.DefaultStream); err != nil {
		t.Errorf("Follow with its context done: %v, want nil", err)
	}
}
