package replica

import (
	"fmt"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// BenchmarkPerson compares a read through the Replica (the current
// generation, a reference held) with the same read on its store directly:
// the cost a swappable model adds to every API request.
func BenchmarkPerson(b *testing.B) {
	_, js := testkit.StartNATS(b)
	testkit.PersonsStream(b, js)
	publishConsumers(b, js, 0, 1000, 1)
	r := open(b, js, b.TempDir(), nil)
	run(b, r)
	waitCaughtUp(b, r, 1000)
	ctx := b.Context()
	for _, bc := range []struct {
		name string
		read func(id string) error
	}{
		{"store", func(id string) error { _, err := r.cur.Load().store.Person(ctx, id); return err }},
		{"replica", func(id string) error { _, err := r.Person(ctx, id); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if err := bc.read(consumerID(i % 1000)); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

// BenchmarkCompact measures a compaction by copy of a model of n
// consumers, caught up and idle: the copy through the pipe, its restore,
// its catch-up and the swap (b.N compactions, each of the last one's
// copy).
func BenchmarkCompact(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("consumers=%d", n), func(b *testing.B) {
			_, js := testkit.StartNATS(b)
			testkit.PersonsStream(b, js)
			publishConsumers(b, js, 0, n, 1)
			root := b.TempDir()
			r := open(b, js, root, func(c *Config) { c.Store.MemoryBudget = 256 << 20 })
			run(b, r)
			waitCaughtUp(b, r, uint64(n)) //nolint:gosec // G115: a small count
			for b.Loop() {
				if _, err := r.Compact(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
