package projector

import (
	"math/rand/v2"
	"testing"

	"github.com/lookup/persons/events"
)

// BenchmarkSigners measures Store.Signers, the read behind GET signers: a
// consumer and its signers from the store of the benchmark's mixed events
// (full signers with address, phone, SSN and birth date among them). It
// reports the signers read per call.
func BenchmarkSigners(b *testing.B) {
	s := openStore(b, b.TempDir(), StoreOptions{})
	var batch []item
	for _, m := range genStream(b, rand.New(rand.NewPCG(5, 6)), 20_000) {
		if m.valid {
			batch = append(batch, item{valid: true, ev: m.ev, seq: uint64(len(batch) + 1)})
		}
	}
	if _, err := s.applyBatch(batch); err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	var consumers []string
	for _, it := range batch {
		if e := it.ev.Entity(); e.Kind == events.KindSigner {
			if _, got, err := s.Signers(ctx, e.ConsumerID); err == nil && len(got) > 0 {
				consumers = append(consumers, e.ConsumerID)
			}
		}
	}
	if len(consumers) == 0 {
		b.Fatal("no consumer with signers in the generated stream")
	}
	read := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		_, got, err := s.Signers(ctx, consumers[i%len(consumers)])
		if err != nil {
			b.Fatal(err)
		}
		read += len(got)
	}
	b.ReportMetric(float64(read)/float64(b.N), "signers/op")
}
