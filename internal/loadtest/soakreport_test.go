package loadtest

import (
	"strings"
	"testing"
	"time"
)

func sample(at time.Duration, rss, heap int64) MemSample {
	return MemSample{At: at, ProcMem: ProcMem{RSS: rss * MiB, Anon: rss * MiB / 2, File: rss * MiB / 2, Tables: rss * MiB / 4}, Heap: heap, TablesOnDisk: 300 * MiB, Applied: 2000000}
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
		{name: "one", in: []MemSample{sample(0, 100, 1)}, ok: true},
		{name: "peak in the middle, first of equals", in: []MemSample{sample(0, 100, 1), sample(10*time.Second, 200, 1),
			sample(20*time.Second, 200, 1), sample(30*time.Second, 150, 1)},
			ok: true, peak: 10 * time.Second, end: 30 * time.Second, growth: 50 * MiB},
		{name: "shrinking", in: []MemSample{sample(0, 300, 1), sample(10*time.Second, 200, 1)},
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

func TestWriteSoak(t *testing.T) {
	samples := []MemSample{sample(0, 200, 80*MiB), sample(10*time.Second, 240, -1), sample(20*time.Second, 220, 90*MiB)}
	tests := []struct {
		name  string
		limit int64
		want  []string
	}{
		{name: "under the limit", limit: 256 * MiB, want: []string{
			"| 0s | 200.0 | 100.0 | 100.0 | 50.0 | 0.0 | 80.0 | 300.0 | 2,000,000 |",
			"| 10s | 240.0 | 120.0 | 120.0 | 60.0 | 0.0 | n/a | 300.0 | 2,000,000 |",
			"Peak RSS 240.0 MiB at 10s (anon 120.0, file 120.0 of which tables 60.0; Go heap n/a); RSS at the end 220.0 MiB; " +
				"growth over the soak +20.0 MiB (+10.0%, from 200.0 MiB at 0s); peak < 256.0 MiB: yes.",
		}},
		{name: "at the limit", limit: 240 * MiB, want: []string{"peak < 240.0 MiB: no."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			WriteSoakSamples(&b, samples)
			s, _ := Summarize(samples)
			WriteSoakSummary(&b, s, tt.limit)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
