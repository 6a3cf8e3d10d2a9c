package main

import (
	"testing"
	"time"
)

func TestParseQueryTime(t *testing.T) {
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		flag, in string
		want     time.Time
	}{
		{"--since", "2026-11-01", day},
		{"--until", "2026-11-01", day.Add(24*time.Hour - time.Nanosecond)},
		{"--since", "2026-11-01T10:00:00Z", day.Add(10 * time.Hour)},
		{"--since", "", time.Time{}},
	} {
		t.Run(tc.flag+" "+tc.in, func(t *testing.T) {
			got, err := parseQueryTime(tc.flag, tc.in)
			if err != nil || !got.Equal(tc.want) {
				t.Errorf("parseQueryTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestParseAccountingQuery(t *testing.T) {
	const id = "aaaaaaaa-0000-4000-8000-000000000001"
	for _, tc := range []struct {
		name, person, since, format string
		wantErr                     bool
	}{
		{"upper-case id lower-cased", "AAAAAAAA-0000-4000-8000-000000000001", "", "jsonl", false},
		{"fhir", id, "2026-11-01", "fhir", false},
		{"no person", "", "", "jsonl", true},
		{"not a UUID", "x", "", "jsonl", true},
		{"bad format", id, "", "xml", true},
		{"bad since", id, "yesterday", "jsonl", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q, err := parseAccountingQuery(tc.person, tc.since, "", tc.format)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err == nil && (q.Person != id || q.Format != tc.format) {
				t.Errorf("query = %+v, want person %s format %s", q, id, tc.format)
			}
		})
	}
}
