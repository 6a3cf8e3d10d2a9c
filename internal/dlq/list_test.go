package dlq

import "testing"

func TestLetterOrigin(t *testing.T) {
	for _, tc := range []struct {
		name string
		l    Letter
		want string
	}{
		{"known", Letter{Stream: "PERSONS", OrigSeq: 42}, "PERSONS:42"},
		{"unknown", Letter{}, "-"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.l.Origin(); got != tc.want {
				t.Errorf("Origin() = %q, want %q", got, tc.want)
			}
		})
	}
}
