package loadtest

import (
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"plain", "4242 (lookupd) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 130 0 0 20 0 9 0 1 0 0", 3800 * time.Millisecond, false},
		{"name with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0", 30 * time.Millisecond, false},
		{"no name", "4242 lookupd S 1", 0, true},
		{"short", "4242 (lookupd) S 1 2 3", 0, true},
		{"not a number", "4242 (lookupd) S 1 4242 4242 0 -1 4194560 100 0 0 0 x 130 0", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU(tt.stat)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseStatCPU error = %v, want error %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseStatCPU = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestProcessCPUSelf(t *testing.T) {
	before, err := ProcessCPU(0)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for x := 0; time.Now().Before(deadline); x++ { // burn CPU until the clock ticks
		if got, err := ProcessCPU(0); err != nil || got > before {
			if err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("ProcessCPU(0) stayed at %v through 5 s of busy work", before)
}
