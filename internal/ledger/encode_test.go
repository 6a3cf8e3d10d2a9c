package ledger

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAppendRecordIsJSONMarshal(t *testing.T) {
	full := Record{Time: time.Date(2026, 11, 22, 12, 0, 3, 120000000, time.UTC), RequestID: "req-1", Subject: "alice",
		Client: "app", Tenants: []string{"t1", "t2"}, Operation: "getAuthorizedSigners", PersonID: personA,
		SSNMode: "FULL", DOBDisclosed: true, Purpose: "TREAT", Requested: "2026-11-20", Persons: 3, Replica: "lookupd-0", ReadModelSeq: 1843,
		Chain: "c", Seq: 17, Index: 2, Prev: "9e4b"}
	for _, tc := range []struct {
		name string
		rec  Record
	}{
		{"full", full},
		{"minimal", Record{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)), PersonID: personA, Chain: "c", Seq: 1}},
		{"in a message", Record{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), PersonID: personA, Operation: "getPerson", Persons: 1}},
		{"escapes", Record{Subject: "a\"b\\c\n\r\t\x01<>&", Client: "é\u2028\u2029\xff€", Purpose: "x", Tenants: []string{"\""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := json.Marshal(tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendRecord(nil, &tc.rec); string(got) != string(want) {
				t.Errorf("appendRecord =\n%s\nwant (json.Marshal)\n%s", got, want)
			}
		})
	}
}
