package events

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// isSyntaxError reports whether err is Decode's error for a body that is
// not JSON.
func isSyntaxError(err error) bool {
	var ie *InvalidEventError
	return errors.As(err, &ie) && ie.Field == "" && strings.HasPrefix(ie.Reason, "body is not JSON")
}

// short returns b for a message, cut to 200 bytes.
func short(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func fuzzSeeds(f *testing.F) {
	for _, typ := range Types {
		f.Add(mustJSON(f, sampleEnvelope(typ)))
	}
	for _, c := range invalidCases() {
		_, _, body := c.build(f)
		f.Add(body)
	}
	for _, s := range []string{
		`{}`, `[]`, `""`, `"\ud800"`, `"\ud800\udc00"`, `"\udc00\ud800"`, "\"\xff\"", `{"a":1e+5}`, `{"a":-0.0E-0}`,
		`{"a":[{},[],"",0,true,false,null]}`, `{"a" : { "b" : [ 1 , 2 ] } }`, ` {"data":{"x":"\u00e9"}} `,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
		strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
		`{"data":{"address":{"x":` + strings.Repeat("[", 9997) + strings.Repeat("]", 9997) + `}}}`,
		`{"data":{"address":{"x":` + strings.Repeat("[", 9998) + strings.Repeat("]", 9998) + `}}}`,
	} {
		f.Add([]byte(s))
	}
}

// FuzzDecodeSyntax checks that Decode calls a body "not JSON" exactly when
// encoding/json.Valid refuses it, and that the strings of an event it
// accepts are those encoding/json decodes.
func FuzzDecodeSyntax(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		ev, err := Decode(SubjectPrefixConsumer+testConsumerID, body)
		if got, want := isSyntaxError(err), !json.Valid(body); got != want {
			t.Fatalf("Decode(%q) = %v: syntax error %v, want %v", short(body), err, got, want)
		}
		if err != nil {
			return
		}
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("encoding/json refuses %q that Decode accepts: %v", body, err)
		}
		if m["id"] != ev.ID || m["source"] != ev.Source {
			t.Fatalf("Decode(%q) id %q source %q, encoding/json %q %q", body, ev.ID, ev.Source, m["id"], m["source"])
		}
		data, _ := m["data"].(map[string]any)
		switch d := ev.Data.(type) {
		case Consumer:
			if data["first_name"] != d.FirstName || data["last_name"] != d.LastName {
				t.Fatalf("Decode(%q) names %q %q, encoding/json %q %q", body, d.FirstName, d.LastName, data["first_name"], data["last_name"])
			}
		}
	})
}

// FuzzScannerString checks that the scanner decodes a JSON string as
// encoding/json does, and refuses exactly what encoding/json refuses.
func FuzzScannerString(f *testing.F) {
	for _, s := range []string{`abc`, `a\"b`, `\u00e9`, `\ud83d\ude00`, `\ud800`, `\ud800\u0041`, "\xff\xfe", `\x`, "\t", `\/\b\f\n\r\t`, `é😀`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, content string) {
		lit := []byte(`"` + content + `"`)
		var want string
		wantErr := json.Unmarshal(lit, &want)
		s := scanner{data: lit}
		got, err := s.string()
		if err == nil && s.pos != len(lit) {
			// The content held a closing quote: the literal is not one string.
			if wantErr == nil {
				t.Fatalf("scanner stopped at %d of %q that encoding/json reads whole", s.pos, lit)
			}
			return
		}
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("scanner.string(%q) error %v, encoding/json %v", lit, err, wantErr)
		}
		if err == nil && got != want {
			t.Fatalf("scanner.string(%q) = %q, encoding/json %q", lit, got, want)
		}
	})
}

func TestScannerDepthLimit(t *testing.T) {
	deep := []byte(`{"ext":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}`)
	_, err := Decode("x", deep)
	if !isSyntaxError(err) {
		t.Fatalf("Decode of 20000 nested arrays = %v, want a syntax error", err)
	}
}
