package loadtest

import (
	"testing"
	"time"
)

// sample is a memory sample at at of rss MiB.
func sample(at time.Duration, rss int64) MemSample {
	return MemSample{At: at, ProcMem: ProcMem{RSS: rss * MiB}}
}

func TestSummarize(t *testing.T) {
	tests := []struct {
		name             string
		in               []MemSample
		ok               bool
		first, peak, end time.Duration
		growth           int64
	}{
		{name: "none"},
		{name: "one", in: []MemSample{sample(0, 100)}, ok: true},
		{name: "peak in the middle, first of equals", in: []MemSample{sample(0, 100), sample(10*time.Second, 200),
			sample(20*time.Second, 200), sample(30*time.Second, 150)},
			ok: true, peak: 10 * time.Second, end: 30 * time.Second, growth: 50 * MiB},
		{name: "shrinking", in: []MemSample{sample(0, 300), sample(10*time.Second, 200)},
			ok: true, end: 10 * time.Second, growth: -100 * MiB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok := Summarize(tt.in)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if s.First.At != tt.first || s.Peak.At != tt.peak || s.End.At != tt.end || s.Growth() != tt.growth {
				t.Errorf("Summarize = first %v peak %v end %v growth %d, want %v %v %v %d",
					s.First.At, s.Peak.At, s.End.At, s.Growth(), tt.first, tt.peak, tt.end, tt.growth)
			}
		})
	}
}
