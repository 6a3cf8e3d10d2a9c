package events

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// short returns b for a message, cut to 200 bytes.
func short(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// addSampleEnvelopes adds the sample envelope of every type to f's corpus.
func addSampleEnvelopes(f *testing.F) {
	for _, typ := range Types {
		f.Add(mustJSON(f, sampleEnvelope(typ)))
	}
}

// addBodies adds the body of each of cases to f's corpus.
func addBodies[C interface {
	build(testing.TB) (Type, string, []byte)
}](f *testing.F, cases []C) {
	for _, c := range cases {
		_, _, body := c.build(f)
		f.Add(body)
	}
}

// FuzzDecode checks that Decode never panics, that it fails only with an
// *InvalidEventError with a reason, that it accepts only what
// encoding/json reads as JSON, and that the strings of an event it accepts
// are those encoding/json decodes.
func FuzzDecode(f *testing.F) {
	addSampleEnvelopes(f)
	addBodies(f, invalidCases())
	for _, s := range []string{
		`{}`, `[]`, `""`, `{"id":"\ud800"}`, `{"id":"\ud800\udc00"}`, `{"id":"\udc00\ud800"}`, "{\"id\":\"\xff\"}", `{"a":1e+5}`, `{"a":-0.0E-0}`,
		`{"a":[{},[],"",0,true,false,null]}`, `{"a" : { "b" : [ 1 , 2 ] } }`, ` {"data":{"x":"\u00e9"}} `, `{"a":{"b":1,"b":2}}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := Decode(SubjectPrefixConsumer+testConsumerID, body)
		if err != nil {
			var ie *InvalidEventError
			if !errors.As(err, &ie) || ie.Reason == "" {
				t.Fatalf("Decode(%q) error = %#v, want an *InvalidEventError with a reason", short(body), err)
			}
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("encoding/json refuses %q that Decode accepts: %v", short(body), err)
		}
		if m["id"] != ev.ID || m["source"] != ev.Source {
			t.Fatalf("Decode(%q) id %q source %q, encoding/json %q %q", short(body), ev.ID, ev.Source, m["id"], m["source"])
		}
		data, _ := m["data"].(map[string]any)
		if c, ok := ev.Data.(Consumer); ok && (data["first_name"] != c.FirstName || data["last_name"] != c.LastName) {
			t.Fatalf("Decode(%q) names %q %q, encoding/json %q %q", short(body), c.FirstName, c.LastName, data["first_name"], data["last_name"])
		}
	})
}

// TestDecodeDeepNesting checks that nesting beyond the decoder's limit
// (10000 levels) is refused as not JSON, rather than exhausting the stack.
func TestDecodeDeepNesting(t *testing.T) {
	deep := []byte(`{"ext":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`)
	_, err := Decode("x", deep)
	var ie *InvalidEventError
	if !errors.As(err, &ie) || ie.Field != "" || !strings.HasPrefix(ie.Reason, "body is not JSON") {
		t.Fatalf("Decode of 20000 nested arrays = %v, want a syntax error", err)
	}
}
