package loadtest

import (
	"testing"
	"time"
)

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
