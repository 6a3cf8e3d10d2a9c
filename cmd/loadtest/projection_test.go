package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestWriteProjection checks the projection's table and verdicts: each
// projection set against the drain before it.
func TestWriteProjection(t *testing.T) {
	runs := []projectionRun{
		{drain: true, took: 10 * time.Second, events: 1_000_000, cpu: 4 * time.Second, brokerCPU: 6 * time.Second},
		{took: 20 * time.Second, events: 1_000_000, cpu: 30 * time.Second, peakRSS: 300 << 20},
		{drain: true, took: 10 * time.Second, events: 1_000_000},
		{took: 40 * time.Second, events: 1_000_000},
	}
	var b strings.Builder
	writeProjection(&b, runs)
	out := b.String()
	for _, want := range []string{
		"| raw drain | 1000000 | 10s | 100,000 | 4.0 | 6.0 | - |",
		"| lookupd project | 1000000 | 20s | 50,000 | 30.0 | 0.0 | 300 MiB |",
		"Round 1: the projection at **0.50x** of the drain (issue 45: at least 0.45x): pass",
		"Round 2: the projection at **0.25x** of the drain (issue 45: at least 0.45x): **fail**",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	writeProjection(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no runs: wrote %q", b.String())
	}
}

// TestSampleHWM: the sampler reads a live process's own peak RSS, about
// what the process says of itself.
func TestSampleHWM(t *testing.T) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc here:", err)
	}
	peak := sampleHWM(os.Getpid())
	got := peak()
	if got <= 0 {
		t.Fatalf("sampleHWM read %d bytes; /proc/self/status says:\n%s", got, status)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if got < int64(ms.HeapInuse) { //nolint:gosec // G115: a heap's size fits
		t.Errorf("peak RSS %d bytes, below the heap in use, %d", got, ms.HeapInuse)
	}
}
