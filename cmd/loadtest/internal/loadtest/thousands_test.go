package loadtest

import "testing"

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999.4: "999", 1000: "1,000", 76877.2: "76,877", 1234567: "1,234,567"} {
		if got := Thousands(in); got != want {
			t.Errorf("Thousands(%v) = %q, want %q", in, got, want)
		}
	}
}
