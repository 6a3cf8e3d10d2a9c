package projector

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lookup/persons/events"
)

// BenchmarkPublishToVisible publishes at a steady rate for a few seconds to
// an in-process NATS (same box) and reports the p50 and p99 of the time
// from each event's JetStream timestamp to the commit that made it visible
// (Config.ObserveVisible). Run with -benchtime=1x.
func BenchmarkPublishToVisible(b *testing.B) {
	for _, rate := range []int{1000, 20000} {
		b.Run(fmt.Sprintf("%d/s", rate), func(b *testing.B) {
			for b.Loop() {
				p50, p99, n := publishToVisible(b, rate, 3*time.Second)
				b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
				b.ReportMetric(float64(n), "events")
			}
		})
	}
}

func publishToVisible(b *testing.B, rate int, d time.Duration) (p50, p99 time.Duration, n int) {
	js := setup(b)
	s := openStore(b, b.TempDir(), StoreOptions{})
	var mu sync.Mutex
	var lat []time.Duration
	p := New(js, s, Config{ObserveVisible: func(d time.Duration) { mu.Lock(); lat = append(lat, d); mu.Unlock() }})
	stop := runProjector(b, p)
	defer func() { _ = stop() }()

	const ids = 1000
	msgs := make([]wireMsg, ids)
	for i := range msgs {
		msgs[i] = encodeMsg(b, events.Event{EntityVersion: 1, Data: events.Consumer{
			ConsumerID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), BusinessID: testBiz, FirstName: "A", LastName: "B"}})
	}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	start, sent := time.Now(), 0
	for time.Since(start) < d {
		<-tick.C
		due := int(time.Since(start).Seconds() * float64(rate))
		for ; sent < due; sent++ {
			m := msgs[sent%ids]
			nm := nats.NewMsg(m.subject)
			nm.Data = m.body
			if _, err := js.PublishMsgAsync(nm); err != nil {
				b.Fatal(err)
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(60 * time.Second):
		b.Fatal("publish acks did not arrive")
	}
	ctx, cancel := context.WithTimeout(b.Context(), 60*time.Second)
	defer cancel()
	if err := p.Position().Wait(ctx, uint64(sent)); err != nil {
		b.Fatalf("wait for %d: %v", sent, err)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], len(lat)
}
