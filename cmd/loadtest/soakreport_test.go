package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/loadtest"
)

// sample is a memory sample at at of rss MiB (half anonymous, half
// file-backed, a quarter tables) and heap bytes of Go heap.
func sample(at time.Duration, rss, heap int64) loadtest.MemSample {
	const unit = loadtest.MiB
	return loadtest.MemSample{At: at, ProcMem: loadtest.ProcMem{RSS: rss * unit, Anon: rss * unit / 2, File: rss * unit / 2, Tables: rss * unit / 4},
		Heap: heap, TablesOnDisk: 300 * unit, Applied: 2000000}
}

func TestWriteSoak(t *testing.T) {
	samples := []loadtest.MemSample{sample(0, 200, 80*loadtest.MiB), sample(10*time.Second, 240, -1), sample(20*time.Second, 220, 90*loadtest.MiB)}
	tests := []struct {
		name  string
		limit int64
		want  []string
	}{
		{name: "under the limit", limit: 256 * loadtest.MiB, want: []string{
			"| 0s | 200.0 | 100.0 | 100.0 | 50.0 | 0.0 | 80.0 | 300.0 | 2,000,000 |",
			"| 10s | 240.0 | 120.0 | 120.0 | 60.0 | 0.0 | n/a | 300.0 | 2,000,000 |",
			"Peak RSS 240.0 MiB at 10s (anon 120.0, file 120.0 of which tables 60.0; Go heap n/a); RSS at the end 220.0 MiB; " +
				"growth over the soak +20.0 MiB (+10.0%, from 200.0 MiB at 0s); peak < 256.0 MiB: yes.",
		}},
		{name: "at the limit", limit: 240 * loadtest.MiB, want: []string{"peak < 240.0 MiB: no."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			writeSoakSamples(&b, samples)
			s, _ := loadtest.Summarize(samples)
			writeSoakSummary(&b, s, tt.limit)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}
