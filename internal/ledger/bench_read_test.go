package ledger

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/lookup/persons/internal/testing/testkit"
)

// BenchmarkRecordsOf is what a reader of the stream (the accounting
// index, verify, lookupd audit's scans) pays to decode the messages a
// Ledger writes under load (answers of one or five persons, gathered by
// group commit), per record read (ns/record), and the stream's bytes per
// record.
func BenchmarkRecordsOf(b *testing.B) {
	for _, persons := range []int{1, 5} {
		b.Run(fmt.Sprintf("persons=%d", persons), func(b *testing.B) {
			msgs, stored := benchWritten(b, persons)
			var records int
			for _, m := range msgs {
				recs, err := RecordsOf(m.subject, m.data)
				if err != nil {
					b.Fatal(err)
				}
				records += len(recs)
			}
			n := 0
			for b.Loop() {
				for _, m := range msgs {
					if _, err := RecordsOf(m.subject, m.data); err != nil {
						b.Fatal(err)
					}
				}
				n++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*records), "ns/record")
			b.ReportMetric(float64(stored)/float64(records), "bytes/record")
			b.ReportMetric(float64(records)/float64(len(msgs)), "records/msg")
		})
	}
}

// benchWritten writes 2,000 answers of persons persons each through a
// Ledger, from 64 callers, and returns the messages stored and their
// bytes.
func benchWritten(b *testing.B, persons int) ([]stored, uint64) {
	b.Helper()
	nc, js := testkit.StartNATS(b)
	l := benchLedger(b, nc, 0)
	d := benchDisclosure(persons)
	var wg sync.WaitGroup
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < 2000; i += 64 {
				if err := l.Disclose(context.Background(), d); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var out []stored
	var bytes uint64
	err := readAll(b.Context(), js, DefaultStream, func(m stored) error {
		out = append(out, stored{subject: m.subject, data: append([]byte(nil), m.data...)})
		bytes += uint64(len(m.data))
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out, bytes
}
