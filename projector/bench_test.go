package projector

import (
	"context"
	"encoding/json"
	"flag"
	"math/rand/v2"
	"os"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/events"
)

// benchEvents is the size of the stream the benchmarks project: 100,000
// by default, -projection-events to measure at scale (issue 23 asks for
// 1M: go test -run '^$' -bench 'Projection$' -benchtime 1x ./projector/
// -args -projection-events=1000000).
var benchEvents = 100_000

// benchBudget is lookupd's default memory budget (LOOKUP_MEMORY_BUDGET),
// so that the store is sized as it is in the default configuration.
const benchBudget = 192 << 20

// benchProfile, when set, is where BenchmarkProjection writes the CPU
// profile of its projections alone (-test.cpuprofile also covers the
// stream's publication and the drains).
var benchProfile string

func init() {
	flag.IntVar(&benchEvents, "projection-events", benchEvents, "events in the stream BenchmarkProjection and BenchmarkApply project")
	flag.StringVar(&benchProfile, "projection-cpuprofile", "", "write the CPU profile of BenchmarkProjection's projections alone to this file")
}

// BenchmarkProjection measures projection throughput (events/s) from an
// in-process JetStream server with file storage into a fresh Badger store,
// next to the rate of merely draining the same stream with an ordered
// consumer (drain-events/s), and their ratio. Each iteration drains and then
// projects the whole pre-published stream; the stream is published once,
// outside the timing. The stream is the mixed workload of genStream (about
// half full signer upserts, out-of-order versions, deletions), without
// invalid events.
func BenchmarkProjection(b *testing.B) {
	srv := startServer(b, b.TempDir(), -1)
	js := connect(b, srv.ClientURL())
	createStream(b, js)
	var msgs []wireMsg
	for _, m := range genStream(b, rand.New(rand.NewPCG(5, 6)), benchEvents*103/100) {
		if m.valid && len(msgs) < benchEvents {
			msgs = append(msgs, m)
		}
	}
	publishAll(b, js, msgs)
	last := streamLastSeq(b, js)
	stream, err := js.Stream(b.Context(), "PERSONS")
	if err != nil {
		b.Fatal(err)
	}

	var drainDur, projDur, cpu, drainCPU time.Duration
	prof := startProfile(b)
	b.ResetTimer()
	for range b.N {
		// Drain: read every message, no decoding, no store.
		start := time.Now()
		var d0, d1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &d0)
		drain(b, stream, last)
		drainDur += time.Since(start)
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &d1)
		drainCPU += time.Duration(d1.Utime.Nano() + d1.Stime.Nano() - d0.Utime.Nano() - d0.Stime.Nano())

		b.StopTimer()
		s, err := Open(b.TempDir(), StoreOptions{MemoryBudget: benchBudget})
		if err != nil {
			b.Fatal(err)
		}
		p := New(js, s, Config{})
		ctx, cancel := context.WithCancel(b.Context())
		errc := make(chan error, 1)
		b.StartTimer()

		start = time.Now()
		var ru0, ru1 syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
		prof.resume()
		go func() { errc <- p.Run(ctx) }()
		select {
		case <-p.CaughtUp():
		case <-time.After(5 * time.Minute):
			b.Fatalf("not caught up: %+v", p.Progress())
		}
		projDur += time.Since(start)
		prof.pause()
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu += time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())

		b.StopTimer()
		cancel()
		if err := <-errc; err != nil {
			b.Fatal(err)
		}
		if pr := p.Progress(); pr.AppliedSeq != last {
			b.Fatalf("applied %d, want %d", pr.AppliedSeq, last)
		}
		_ = s.Close()
		b.StartTimer()
	}
	b.StopTimer()
	total := float64(last) * float64(b.N)
	proj := total / projDur.Seconds()
	raw := total / drainDur.Seconds()
	b.ReportMetric(proj, "events/s")
	b.ReportMetric(raw, "drain-events/s")
	b.ReportMetric(proj/raw, "ratio")
	// CPU time per event (whole process: server, client, projector) tells the
	// cost apart from contention with other processes on a shared machine.
	b.ReportMetric(float64(cpu.Microseconds())/total, "cpu-µs/event")
	b.ReportMetric(float64(drainCPU.Microseconds())/total, "drain-cpu-µs/event")
	b.ReportMetric(cpu.Seconds()/projDur.Seconds(), "cpus-used")
}

// profile is -projection-cpuprofile's CPU profile of the first
// projection (a Go CPU profile covers one span of time).
type profile struct {
	f    *os.File
	done bool
}

func startProfile(b *testing.B) *profile {
	if benchProfile == "" {
		return nil
	}
	f, err := os.Create(benchProfile)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close() })
	return &profile{f: f}
}

func (p *profile) resume() {
	if p != nil && !p.done {
		if err := pprof.StartCPUProfile(p.f); err != nil {
			panic(err)
		}
	}
}

func (p *profile) pause() {
	if p != nil && !p.done {
		pprof.StopCPUProfile()
		p.done = true
	}
}

// drain reads the stream up to last with an ordered consumer and the same
// client buffer as the projector.
func drain(b *testing.B, stream jetstream.Stream, last uint64) {
	b.Helper()
	cons, err := stream.OrderedConsumer(b.Context(), jetstream.OrderedConsumerConfig{})
	if err != nil {
		b.Fatal(err)
	}
	it, err := cons.Messages(jetstream.PullMaxMessages(2000))
	if err != nil {
		b.Fatal(err)
	}
	defer it.Stop()
	for {
		m, err := it.Next()
		if err != nil {
			b.Fatal(err)
		}
		md, err := m.Metadata()
		if err != nil {
			b.Fatal(err)
		}
		if md.Sequence.Stream >= last {
			return
		}
	}
}

// BenchmarkDecodeStream measures decoding alone (events.Decode) over the
// events of BenchmarkProjection's stream, in turn: the part of a
// projection's CPU an event that the inbound contract sets, next to the
// drain's and the apply's (BenchmarkApply).
func BenchmarkDecodeStream(b *testing.B) {
	var msgs []wireMsg
	for _, m := range genStream(b, rand.New(rand.NewPCG(5, 6)), 20_000) {
		if m.valid {
			msgs = append(msgs, m)
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		m := msgs[i%len(msgs)]
		if _, err := events.Decode(m.subject, m.body); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkValueEncoding compares the store's binary value encoding of a
// full signer with JSON (size and speed); the binary form is what is stored.
func BenchmarkValueEncoding(b *testing.B) {
	sg := fullSigner(newID(), newID(), "Firstname")
	b.Run("binary", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for range b.N {
			v := encodeSigner(7, &sg)
			if _, _, err := decodeHeader(v); err != nil {
				b.Fatal(err)
			}
			n = len(v)
		}
		b.ReportMetric(float64(n), "bytes/value")
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		var n int
		for range b.N {
			v, err := json.Marshal(struct {
				V uint64 `json:"v"`
				events.Signer
			}{7, sg})
			if err != nil {
				b.Fatal(err)
			}
			n = len(v)
		}
		b.ReportMetric(float64(n), "bytes/value")
	})
}

// BenchmarkApply measures the store alone: applying the benchmark's mixed
// events (already decoded) in batches of 1000, one transaction each. It
// reports the share of events applied (the rest are stale versions skipped).
func BenchmarkApply(b *testing.B) {
	var items []item
	for _, m := range genStream(b, rand.New(rand.NewPCG(5, 6)), 20_000) {
		if m.valid {
			items = append(items, item{valid: true, ev: m.ev})
		}
	}
	s, err := Open(b.TempDir(), StoreOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	b.ResetTimer()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	seq, applied := uint64(0), uint64(0)
	for i := 0; i < b.N; i += 1000 {
		n := min(1000, b.N-i)
		batch := make([]item, n)
		for j := range batch {
			seq++
			batch[j] = items[(i+j)%len(items)]
			batch[j].seq = seq
			// Each pass over the events raises their versions, so passes
			// apply like the first instead of skipping.
			batch[j].ev.EntityVersion += uint64((i+j)/len(items)) * 1_000_000
		}
		st, err := s.applyBatch(batch)
		if err != nil {
			b.Fatal(err)
		}
		applied += st.applied
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/event")
	b.ReportMetric(float64(applied)/float64(b.N), "applied/event")
}
