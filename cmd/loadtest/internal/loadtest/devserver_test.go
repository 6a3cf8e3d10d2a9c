package loadtest

import "testing"

func TestTailKeepsTheEnd(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"short", []string{"ab", "cd"}, "abcd"},
		{"exactly full", []string{"abcd", "efgh"}, "abcdefgh"},
		{"wrapped", []string{"abcdef", "ghij"}, "cdefghij"},
		{"one write longer than the ring", []string{"x", "0123456789"}, "23456789"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tl := NewTail(8)
			for _, w := range tt.writes {
				if n, err := tl.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := tl.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
