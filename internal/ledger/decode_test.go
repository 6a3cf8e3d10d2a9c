package ledger

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sameAsJSON checks that unmarshalMessage reads data as json.Unmarshal
// does: the same message, or an error both times; and returns whether the
// fast path read it.
func sameAsJSON(t *testing.T, data []byte) bool {
	t.Helper()
	var want, got Message
	werr := json.Unmarshal(data, &want)
	gerr := unmarshalMessage(data, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("unmarshalMessage error %v, json.Unmarshal's %v, of\n%s", gerr, werr, data)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("unmarshalMessage =\n%+v\njson.Unmarshal =\n%+v\nof\n%s", got, want, data)
	}
	var fast Message
	return fastMessage(data, &fast)
}

// TestUnmarshalMessageIsJSONs: messages as an outbox writes them, with
// every optional field present or not, read by the fast path, and read as
// json.Unmarshal reads them.
func TestUnmarshalMessageIsJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	for i := range 300 {
		o := outbox{maxRecords: 1 + rng.IntN(40), maxBytes: 56 << 10}
		o.start(pick("lookupd-0", "r"), uint64(1+rng.IntN(1<<20)), pick("", strings.Repeat("ab", 32)))
		for o.add(&Record{Time: time.Unix(1_700_000_000+rng.Int64N(1e8), rng.Int64N(1e9)).UTC(),
			RequestID: fmt.Sprintf("%032x", rng.Uint64()), Subject: pick("", "alice", "bob"), Client: pick("", "app"),
			Tenants: [][]string{nil, {"b1"}, {"b1", "b2"}}[rng.IntN(3)], Operation: pick("getAuthorizedSigners", "searchAuditEvent"),
			PersonID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, rng.IntN(1000)), SSNMode: pick("", "FULL", "LAST4"),
			DOBDisclosed: rng.IntN(2) == 0, Purpose: pick("", "TREAT"), Requested: pick("", "", "2026-11-20"), Persons: 1 + rng.IntN(5), Replica: "lookupd-0",
			ReadModelSeq: rng.Uint64() >> rng.IntN(64)}) {
		}
		if !sameAsJSON(t, o.finish()) {
			t.Fatalf("message %d not read by the fast path:\n%s", i, o.buf)
		}
	}
}

// TestUnmarshalMessageLeavesTheRestToJSON: what a Ledger does not write
// is read by json.Unmarshal, with its result.
func TestUnmarshalMessageLeavesTheRestToJSON(t *testing.T) {
	rec := `{"time":"2026-11-22T12:00:03.1Z","request_id":"r1","operation":"op","person_id":"p","persons":1,"replica":"a","read_model_sequence":5}`
	msg := func(records string) string { return `{"v":2,"replica":"a","seq":3,"records":[` + records + `]}` }
	for _, tc := range []struct {
		name, data string
		fast       bool
	}{
		{"as written", msg(rec + "," + rec), true},
		{"white space", strings.Replace(msg(rec), `"seq":3`, `"seq": 3`, 1), false},
		{"fields in another order", `{"replica":"a","v":2,"seq":3,"records":[` + rec + `]}`, false},
		{"a field it does not know", strings.Replace(msg(rec), `"seq":3`, `"seq":3,"x":1`, 1), false},
		{"an escape", strings.Replace(msg(rec), `"r1"`, `"r\u00e91"`, 1), false},
		{"an escaped quote", strings.Replace(msg(rec), `"r1"`, `"r\"1"`, 1), false},
		{"UTF-8", strings.Replace(msg(rec), `"r1"`, `"ré1"`, 1), false},
		{"invalid UTF-8", strings.Replace(msg(rec), `"r1"`, "\"r\xff1\"", 1), false},
		{"a control character", strings.Replace(msg(rec), `"r1"`, "\"r\x011\"", 1), false},
		{"a negative number", strings.Replace(msg(rec), `"persons":1`, `"persons":-1`, 1), false},
		{"a fraction", strings.Replace(msg(rec), `"persons":1`, `"persons":1.5`, 1), false},
		{"an exponent", strings.Replace(msg(rec), `"seq":3`, `"seq":3e2`, 1), false},
		{"a leading zero", strings.Replace(msg(rec), `"seq":3`, `"seq":03`, 1), false},
		{"a number too large", strings.Replace(msg(rec), `"seq":3`, `"seq":18446744073709551616`, 1), false},
		{"dob_disclosed false", strings.Replace(msg(rec), `"persons":1`, `"dob_disclosed":false,"persons":1`, 1), false},
		{"where it is stored", strings.Replace(msg(rec), `"read_model_sequence":5`, `"read_model_sequence":5,"chain":"c","seq":2`, 1), false},
		{"no tenants", strings.Replace(msg(rec), `"operation"`, `"tenants":[],"operation"`, 1), false},
		{"tenants", strings.Replace(msg(rec), `"operation"`, `"tenants":["b1","b2"],"operation"`, 1), true},
		{"a bad time", strings.Replace(msg(rec), `03.1Z`, `03.1`, 1), false},
		{"no records", msg(""), false},
		{"cut short", msg(rec)[:40], false},
		{"trailing bytes", msg(rec) + "x", false},
		{"trailing space", msg(rec) + " ", false},
		{"not JSON", "nope", false},
		{"format 1", rec, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if fast := sameAsJSON(t, []byte(tc.data)); fast != tc.fast {
				t.Errorf("read by the fast path: %v, want %v", fast, tc.fast)
			}
		})
	}
}

// FuzzUnmarshalMessage: whatever the bytes, unmarshalMessage reads them
// as json.Unmarshal does.
func FuzzUnmarshalMessage(f *testing.F) {
	o := outbox{maxRecords: 3, maxBytes: 56 << 10}
	o.start("a", 1, "")
	r := Record{Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), RequestID: "r", Tenants: []string{"t"}, Operation: "op",
		PersonID: "p", SSNMode: "FULL", DOBDisclosed: true, Purpose: "x", Persons: 2, Replica: "a", ReadModelSeq: 9}
	o.add(&r)
	o.add(&r)
	f.Add(o.finish())
	f.Add([]byte(`{"v":2,"replica":"a","seq":1,"records":[{"time":"2026-01-01T00:00:00Z"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) { sameAsJSON(t, data) })
}
