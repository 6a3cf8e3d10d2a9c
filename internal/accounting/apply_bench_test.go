package accounting_test

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/testing/fixtures"
)

// BenchmarkApply indexes a synthetic ledger of records (format 2
// messages of 1 to 128 records, as the load tool fills) into a new index
// within a memory budget of 192 MiB, 256 messages a transaction as the
// follower applies them: ns/op is per record.
func BenchmarkApply(b *testing.B) {
	for _, records := range []int{200000, 1000000} {
		b.Run(fmt.Sprint(records, " records"), func(b *testing.B) {
			spec := fixtures.LedgerSpec{Records: records, Persons: records / 10, Replicas: 8, MaxRecords: 128, Seed: 1}
			var msgs []accounting.Message
			l := fixtures.NewLedger(spec)
			for {
				subject, data, _, ok, err := l.Next()
				if err != nil {
					b.Fatal(err)
				}
				if !ok {
					break
				}
				msgs = append(msgs, accounting.Message{StreamSeq: uint64(len(msgs) + 1), Subject: subject, Data: data})
			}
			b.ResetTimer()
			cpu0 := cpuTime(b)
			for range b.N {
				x, err := accounting.Open(b.TempDir(), accounting.Options{MemoryBudget: 192 << 20})
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < len(msgs); i += accounting.MaxApply {
					if err := x.Apply(msgs[i:min(i+accounting.MaxApply, len(msgs))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := x.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*records), "ns/record")
			b.ReportMetric(float64((cpuTime(b)-cpu0).Nanoseconds())/float64(b.N*records), "cpu-ns/record")
		})
	}
}

// cpuTime returns the CPU time (user and system) this process has used.
func cpuTime(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
