package ledger

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lookup/persons/events"
)

// sameAsJSON checks that unmarshalMessage reads data as jsonMessage
// (json.Unmarshal) does: the same message, or an error both times; and
// returns whether the fast path read it.
func sameAsJSON(t *testing.T, data []byte) bool {
	t.Helper()
	var want, got Message
	werr := jsonMessage(data, &want)
	gerr := unmarshalMessage(data, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("unmarshalMessage error %v, jsonMessage's %v, of\n%s", gerr, werr, data)
	}
	if werr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("unmarshalMessage =\n%+v\njsonMessage =\n%+v\nof\n%s", got, want, data)
	}
	var fast Message
	return fastMessage(data, &fast)
}

// TestUnmarshalMessageIsJSONs: messages as an outbox writes them (format
// 3) and as it wrote them (format 2), with every optional field present or
// not, read by the fast path, and read as jsonMessage reads them.
func TestUnmarshalMessageIsJSONs(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	answer := func(i int) *pending {
		d := events.Disclosure{RequestID: fmt.Sprintf("%032x", rng.Uint64()), Subject: pick("", "alice", "bob"), Client: pick("", "app"),
			Tenants: [][]string{nil, {"b1"}, {"b1", "b2"}}[rng.IntN(3)], Operation: pick("getAuthorizedSigners", "searchAuditEvent"),
			Purpose: pick("", "TREAT"), Requested: pick("", "", "2026-11-20")}
		for range 1 + rng.IntN(5) {
			d.Persons = append(d.Persons, events.DisclosedPerson{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, rng.IntN(1000)),
				SSNMode: pick("", "FULL", "LAST4"), DOB: rng.IntN(2) == 0})
		}
		return &pending{d: d, time: time.Unix(1_700_000_000+rng.Int64N(1e8), rng.Int64N(1e9)).UTC(), pos: rng.Uint64() >> rng.IntN(64)}
	}
	for i := range 300 {
		replica, seq, prev := pick("lookupd-0", "r"), uint64(1+rng.IntN(1<<20)), pick("", strings.Repeat("ab", 32))
		var data []byte
		if i%2 == 0 {
			o := outbox{maxRecords: 1 + rng.IntN(40), maxBytes: 56 << 10}
			o.start(replica, seq, prev)
			for p := answer(i); o.add(p, replica, 0) > 0; p = answer(i) {
			}
			data = o.finish()
		} else {
			o := outbox2{maxRecords: 1 + rng.IntN(40), maxBytes: 56 << 10}
			o.start(replica, seq, prev)
			var r Record
			for p := answer(i); ; p = answer(i) {
				p.record(0, replica, &r)
				if !o.add(&r) {
					break
				}
			}
			data = o.finish()
		}
		if !sameAsJSON(t, data) {
			t.Fatalf("message %d not read by the fast path:\n%s", i, data)
		}
	}
}

// TestUnmarshalMessageLeavesTheRestToJSON: what a Ledger does not write
// is read by json.Unmarshal, with its result.
func TestUnmarshalMessageLeavesTheRestToJSON(t *testing.T) {
	rec := `{"time":"2026-11-22T12:00:03.1Z","request_id":"r1","operation":"op","person_id":"p","persons":1,"replica":"a","read_model_sequence":5}`
	msg := func(records string) string { return `{"v":2,"replica":"a","seq":3,"records":[` + records + `]}` }
	const person = `{"person_id":"p","ssn_mode":"LAST4","dob_disclosed":true}`
	ans := `{"time":"2026-11-22T12:00:03.1Z","request_id":"r1","operation":"op","persons":2,"replica":"a","read_model_sequence":5,"disclosed":[` +
		person + "," + person + `]}`
	msg3 := func(records string) string { return `{"v":3,"replica":"a","seq":3,"records":[` + records + `]}` }
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
		{"format 3", msg3(ans + "," + ans), true},
		{"format 3, white space", strings.Replace(msg3(ans), `,"disclosed":[`, `, "disclosed":[`, 1), false},
		{"format 3, no person", strings.Replace(msg3(ans), person+","+person, "", 1), false},
		{"format 3, no list of persons", strings.Replace(msg3(ans), `,"disclosed":[`+person+","+person+`]`, "", 1), false},
		{"format 3, a person outside the list", strings.Replace(msg3(ans), `"operation":"op"`, `"operation":"op","person_id":"p"`, 1), false},
		{"format 3, a field of a person it does not know", strings.Replace(msg3(ans), `"person_id":"p"`, `"person_id":"p","x":1`, 1), false},
		{"format 3, dob_disclosed false", strings.Replace(msg3(ans), `"person_id":"p"`, `"person_id":"p","dob_disclosed":false`, 1), false},
		{"format 3 of format 2 records", msg3(rec), false},
		{"format 2 of format 3 records", msg(ans), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if fast := sameAsJSON(t, []byte(tc.data)); fast != tc.fast {
				t.Errorf("read by the fast path: %v, want %v", fast, tc.fast)
			}
		})
	}
}

// FuzzUnmarshalMessage: whatever the bytes, unmarshalMessage reads them
// as jsonMessage does.
func FuzzUnmarshalMessage(f *testing.F) {
	o2 := outbox2{maxRecords: 3, maxBytes: 56 << 10}
	o2.start("a", 1, "")
	r := Record{Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), RequestID: "r", Tenants: []string{"t"}, Operation: "op",
		PersonID: "p", SSNMode: "FULL", DOBDisclosed: true, Purpose: "x", Persons: 2, Replica: "a", ReadModelSeq: 9}
	o2.add(&r)
	o2.add(&r)
	f.Add(o2.finish())
	o := outbox{maxRecords: 3, maxBytes: 56 << 10}
	o.start("a", 1, "")
	d := disclosure("r", "p", "q")
	d.Tenants = []string{"t"}
	p := &pending{d: d, time: r.Time, pos: 9}
	o.add(p, "a", 0)
	o.add(p, "a", 0)
	f.Add(o.finish())
	f.Add([]byte(`{"v":2,"replica":"a","seq":1,"records":[{"time":"2026-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"v":3,"replica":"a","seq":1,"records":[{"time":"2026-01-01T00:00:00Z","disclosed":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) { sameAsJSON(t, data) })
}
