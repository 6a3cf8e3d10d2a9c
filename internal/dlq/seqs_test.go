package dlq

import (
	"slices"
	"testing"
)

func TestParseSeqs(t *testing.T) {
	tests := []struct {
		name, list string
		want       []uint64
		wantErr    string
	}{
		{"one", "7", []uint64{7}, ""},
		{"several, blanks ignored", "3, 1 ,2", []uint64{3, 1, 2}, ""},
		{"zero", "1,0", nil, `want a positive sequence number, got "0"`},
		{"not a number", "x", nil, `want a positive sequence number, got "x"`},
		{"empty item", "1,,2", nil, `want a positive sequence number, got ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSeqs(tt.list)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}
