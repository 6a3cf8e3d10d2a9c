package dev

import (
	"slices"
	"strings"
	"testing"
)

func TestParseTenants(t *testing.T) {
	const id = "0b9e3a52-7c1d-4f7e-9a41-2f6d8c1e5a10"
	tests := []struct {
		name, list string
		want       []string
		wantErr    string
	}{
		{"empty", "", nil, ""},
		{"one, lower-cased", strings.ToUpper(id), []string{id}, ""},
		{"blanks and empty items ignored", " " + id + " ,, ", []string{id}, ""},
		{"not a UUID", id + ",nope", nil, `"nope": want comma-separated canonical UUIDs`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseTenants(tt.list)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("got %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}
