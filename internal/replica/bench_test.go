package replica

import (
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
