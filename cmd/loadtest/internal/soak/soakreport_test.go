package soak

import (
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/cmd/loadtest/internal/loadtest"
)

// sample is a memory sample at at of rss MiB (half anonymous, half
// file-backed, a quarter tables) and heap bytes of Go heap.
func sample(at time.Duration, rss, heap int64) MemSample {
	const unit = loadtest.MiB
	return MemSample{At: at, ProcMem: loadtest.ProcMem{RSS: rss * unit, Anon: rss * unit / 2, File: rss * unit / 2, Tables: rss * unit / 4},
		Heap: heap, TablesOnDisk: 300 * unit, Applied: 2000000}
}

func TestWriteSoakSamples(t *testing.T) {
	samples := []MemSample{sample(0, 200, 80*loadtest.MiB), sample(10*time.Second, 240, -1)}
	var b strings.Builder
	writeSoakSamples(&b, samples)
	for _, w := range []string{
		"| 0s | 200.0 | 100.0 | 100.0 | 50.0 | 0.0 | 80.0 | 300.0 | 2,000,000 |",
		"| 10s | 240.0 | 120.0 | 120.0 | 60.0 | 0.0 | n/a | 300.0 | 2,000,000 |",
	} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, b.String())
		}
	}
}

// TestWriteSoakPhases: the runs side by side, a short rate marked, and
// the criteria with their verdict.
func TestWriteSoakPhases(t *testing.T) {
	run := func(limit, anon int64, p99 time.Duration, rate float64, oom uint64) soakPhaseRun {
		return soakPhaseRun{Limit: limit, Budget: "budget 192.0 MiB", Ready: 3 * time.Second,
			Run: soakRun{Lookups: loadtest.Result{Rate: rate, P50: time.Millisecond, P99: p99},
				CPU: soakCPU{Lookupd: 13 * time.Second, Broker: 2 * time.Second, Tool: 3 * time.Second, Wall: 10 * time.Second}},
			Cgroup: CgroupWatch{PeakAnon: anon, PeakUsage: 2 * anon, Last: CgroupStat{Refaults: 1500}},
			End:    CgroupStat{OOMKills: oom, LimitHits: 42}}
	}
	tests := []struct {
		name    string
		limited soakPhaseRun
		want    []string
	}{
		{"within", run(256*loadtest.MiB, 100*loadtest.MiB, 8*time.Millisecond, 2000, 0), []string{
			"| | no limit | 256.0 MiB limit |",
			"| anonymous memory, peak (MiB) | 120.0 | 100.0 |",
			"| page cache refaults under the load | 1,500 | 1,500 |",
			"| lookups: p50 / p99 | 1.00 ms / 5.00 ms | 1.00 ms / 8.00 ms |",
			"| CPU under the load, of one core: lookupd / the NATS server / the load tool | 130% / 20% / 30% | 130% / 20% / 30% |",
			"| anonymous memory, peak | <= 192.0 MiB (3/4 of the limit) | 100.0 MiB | pass |",
			"Every criterion passed.",
		}},
		{"short, killed", run(256*loadtest.MiB, 200*loadtest.MiB, 30*time.Millisecond, 1800, 1), []string{
			"| lookups: achieved req/s | 2,000 | 1,800 *short* |",
			"| OOM kills | 0 | 1 | **FAIL** |",
			"| lookups p99 | <= 2x without a limit (10.00 ms) | 30.00 ms | **FAIL** |",
			"**Some criteria failed.**",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			phases := []soakPhaseRun{run(0, 120*loadtest.MiB, 5*time.Millisecond, 2000, 0), tt.limited}
			var b strings.Builder
			writeSoakPhases(&b, phases, 2000)
			writeSoakChecks(&b, SoakChecks(phases[0].phase(), phases[1].phase()))
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, b.String())
				}
			}
		})
	}
}

// TestMemoryBudgetLine reads what lookupd logs of its memory budget.
func TestMemoryBudgetLine(t *testing.T) {
	logs := `{"level":"INFO","msg":"starting"}` + "\n" +
		`{"level":"INFO","msg":"memory budget","memory_budget":201326592,"source":"cgroup v1","from":"3/4 of the container's memory limit (cgroup v1)","container_limit":268435456,"go_memory_limit":150994944,"go_memory_limit_from":"3/4 of the memory budget"}` + "\n"
	want := "budget 192.0 MiB (3/4 of the container's memory limit (cgroup v1)), Go soft limit 144.0 MiB (3/4 of the memory budget)"
	if got := memoryBudgetLine(logs); got != want {
		t.Errorf("memoryBudgetLine = %q, want %q", got, want)
	}
	if got := memoryBudgetLine(`{"msg":"listening"}`); got != "" {
		t.Errorf("memoryBudgetLine of a log without it = %q, want \"\"", got)
	}
}

// TestAppliedRate: the rate lookupd applied the stream at over the
// samples, beside the rate published, marked when it fell behind.
func TestAppliedRate(t *testing.T) {
	at := func(d time.Duration, applied uint64) MemSample {
		return MemSample{At: d, Applied: applied}
	}
	published := Paced{Published: 20000, Elapsed: 10 * time.Second} // 2,000 a second
	tests := []struct {
		name    string
		samples []MemSample
		want    string
	}{
		{"kept up", []MemSample{at(0, 1000), at(5*time.Second, 11000), at(10*time.Second, 20500)}, "1,950 (2,000)"},
		{"behind", []MemSample{at(0, 1000), at(10*time.Second, 3250)}, "225 (2,000) *behind*"},
		{"one sample", []MemSample{at(0, 1000)}, "n/a"},
		{"applied unknown at the end", []MemSample{at(0, 1000), at(10*time.Second, 0)}, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := appliedRate(soakRun{Events: published, Samples: tt.samples}); got != tt.want {
				t.Errorf("appliedRate = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSoakCPUShare: a process's CPU time as a share of one core over the
// load's wall time, and n/a when no time was measured.
func TestSoakCPUShare(t *testing.T) {
	tests := []struct {
		name string
		c    soakCPU
		d    time.Duration
		want string
	}{
		{"more than one core", soakCPU{Wall: 10 * time.Second}, 15 * time.Second, "150%"},
		{"a part of one", soakCPU{Wall: 4 * time.Second}, time.Second, "25%"},
		{"nothing measured", soakCPU{}, time.Second, "n/a"},
		{"the process not read", soakCPU{Wall: 10 * time.Second}, -1, "n/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.share(tt.d); got != tt.want {
				t.Errorf("share(%v) over %v = %q, want %q", tt.d, tt.c.Wall, got, tt.want)
			}
		})
	}
}

// TestSoakCPUSince: the CPU each process used between two readings, and
// -1 for one that could not be read at either end (not a lifetime's CPU,
// nor a negative one).
func TestSoakCPUSince(t *testing.T) {
	c0 := soakCPU{Lookupd: 5 * time.Second, Broker: -1, Tool: time.Second}
	c1 := soakCPU{Lookupd: 18 * time.Second, Broker: 9 * time.Second, Tool: -1}
	got := c1.since(c0, 10*time.Second)
	want := soakCPU{Lookupd: 13 * time.Second, Broker: -1, Tool: -1, Wall: 10 * time.Second}
	if got != want {
		t.Errorf("since = %+v, want %+v", got, want)
	}
}
