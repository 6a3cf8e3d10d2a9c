package ledger

import (
	"testing"
	"time"
)

func TestScanPersonNewestFirstWithinBounds(t *testing.T) {
	nc, js := runNATS(t)
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	now := base
	l := newLedger(t, nc, Config{Now: func() time.Time { return now }})
	for i, id := range []string{"r0", "r1", "r2", "r3"} {
		now = base.Add(time.Duration(i) * time.Hour)
		if err := l.Disclose(t.Context(), disclosure(id, personA)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Disclose(t.Context(), disclosure("other", personB)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name         string
		since, until time.Time
		want         []string
	}{
		{"all", time.Time{}, time.Time{}, []string{"r3", "r2", "r1", "r0"}},
		{"since", base.Add(2 * time.Hour), time.Time{}, []string{"r3", "r2"}},
		{"until", time.Time{}, base.Add(time.Hour), []string{"r1", "r0"}},
		{"both", base.Add(time.Hour), base.Add(2 * time.Hour), []string{"r2", "r1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := ScanPerson(t.Context(), js, DefaultStream, personA, tc.since, tc.until)
			if err != nil {
				t.Fatalf("ScanPerson: %v", err)
			}
			var got []string
			for _, r := range recs {
				got = append(got, r.RequestID)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("request ids = %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("request ids = %v, want %v", got, tc.want)
				}
			}
		})
	}
}
