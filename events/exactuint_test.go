package events

import (
	"math/big"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestExactUint(t *testing.T) {
	tests := []struct {
		n      string
		want   uint64
		status int
	}{
		{"1", 1, numOK},
		{"0", 0, numZero},
		{"-0", 0, numZero},
		{"0.0e5", 0, numZero},
		{"-1", 0, numNegative},
		{"-1.5", 0, numNegative},
		{"18446744073709551615", 18446744073709551615, numOK},
		{"18446744073709551616", 0, numTooBig},
		{"99999999999999999999", 0, numTooBig},
		{"100000000000000000000", 0, numTooBig},
		{"1.0", 1, numOK},
		{"1.000000", 1, numOK},
		{"10.0e-1", 1, numOK},
		{"0.001e3", 1, numOK},
		{"1e3", 1000, numOK},
		{"1E+3", 1000, numOK},
		{"12.5e1", 125, numOK},
		{"1.25e1", 0, numFraction},
		{"1.5", 0, numFraction},
		{"1e-3", 0, numFraction},
		{"1e-999999999", 0, numFraction},
		{"1e999999999", 0, numTooBig},
		{"1e99999999999999999999999", 0, numTooBig},
		{"1.8446744073709551615e19", 18446744073709551615, numOK},
		{"1.8446744073709551616e19", 0, numTooBig},
		{"0.18446744073709551615e20", 18446744073709551615, numOK},
		{"1" + strings.Repeat("0", 5000) + "e-5000", 1, numOK},
		{strings.Repeat("9", 5000) + "e-4990", 0, numFraction},
		{"0." + strings.Repeat("0", 5000) + "1e5002", 10, numOK},
	}
	for _, tt := range tests {
		name := tt.n
		if len(name) > 40 {
			name = name[:40]
		}
		t.Run(name, func(t *testing.T) {
			got, status := exactUint([]byte(tt.n))
			if got != tt.want || status != tt.status {
				t.Errorf("exactUint(%.40s) = %d, %d; want %d, %d", tt.n, got, status, tt.want, tt.status)
			}
			// Cross-check with exact rational arithmetic where affordable.
			if len(tt.n) < 200 && !strings.Contains(tt.n, "e9999") && !strings.Contains(tt.n, "e-9999") {
				r, ok := new(big.Rat).SetString(tt.n)
				if !ok {
					t.Fatalf("big.Rat cannot parse %s", tt.n)
				}
				wantOK := r.IsInt() && r.Sign() > 0 && r.Num().IsUint64()
				if (status == numOK) != wantOK {
					t.Errorf("exactUint(%s) status %d, big.Rat says integer in range %v", tt.n, status, wantOK)
				}
			}
		})
	}
}

// FuzzExactUint cross-checks exactUint with exact rational arithmetic.
func FuzzExactUint(f *testing.F) {
	for _, s := range []string{"1", "1.0", "1e3", "12.5e1", "-0", "0.001e3", "18446744073709551615", "1.8446744073709551616e19"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n string) {
		num := jsontext.Value(n)
		if !num.IsValid() || num.Kind() != '0' || strings.TrimSpace(n) != n || len(n) > 100 || strings.ContainsAny(n, "eE") && len(n) > 30 {
			return // not a JSON number, or too costly for big.Rat
		}
		r, ok := new(big.Rat).SetString(string(num))
		if !ok {
			return // big.Rat refuses exponents of a million and more
		}
		want := r.IsInt() && r.Sign() > 0 && r.Num().IsUint64()
		v, status := exactUint(num)
		if (status == numOK) != want || want && v != r.Num().Uint64() {
			t.Fatalf("exactUint(%s) = %d, %d; big.Rat %v", num, v, status, r)
		}
	})
}
