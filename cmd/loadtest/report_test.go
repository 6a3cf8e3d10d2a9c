package main

import (
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/internal/loadtest"
)

func TestWriteClosedLoop(t *testing.T) {
	var b strings.Builder
	writeClosedLoop(&b, []loadtest.Result{
		{Scenario: "bare", Tool: "wrk", Rate: 80000, P99: 6 * time.Millisecond, CPUPerRequest: 15500 * time.Nanosecond},
		{Scenario: "lookupd", Baseline: "bare", Tool: "wrk", Rate: 20000, P99: 29500 * time.Microsecond, Errors: 3},
		{Scenario: "bare signers", Tool: "wrk", Rate: 40000},
		{Scenario: "lookupd signers", Baseline: "bare signers", Tool: "wrk", Rate: 30000},
		{Scenario: "orphan", Baseline: "not measured", Tool: "wrk", Rate: 1},
	})
	for _, want := range []string{
		"| bare | wrk | 80,000 | 6.00 ms | 1.00x | 15.5 µs | 0 |",
		"| lookupd | wrk | 20,000 | 29.50 ms | 0.25x | n/a | 3 |",
		"| bare signers | wrk | 40,000 | 0.00 ms | 1.00x | n/a | 0 |",
		"| lookupd signers | wrk | 30,000 | 0.00 ms | 0.75x | n/a | 0 |",
		"| orphan | wrk | 1 | 0.00 ms | n/a | n/a | 0 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

func TestWriteOpenLoop(t *testing.T) {
	var b strings.Builder
	writeOpenLoop(&b, []loadtest.Result{{Scenario: "lookupd", Tool: "vegeta", Rate: 9999.6, P50: 400 * time.Microsecond, P99: 1500 * time.Microsecond}})
	if want := "| lookupd | vegeta | 10,000 | 0.40 ms | 1.50 ms | 0 |"; !strings.Contains(b.String(), want) {
		t.Errorf("table lacks %q:\n%s", want, b.String())
	}
}
