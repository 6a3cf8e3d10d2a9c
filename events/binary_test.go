package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// toBinary returns the structured body as a binary-mode message: each
// attribute as its ce- header (strings percent-encoded, numbers as their
// text, null as absent), data as the body. ok is false for a body that
// binary mode cannot carry as the same event: not a JSON object of unique
// names, without specversion (then it is no binary-mode message), with
// two names that differ in case alone (header names do not), or an
// attribute of a JSON type that a header's string does not tell apart (a
// number but for entityversion, a string for entityversion, an object, an
// array, a boolean).
func toBinary(body []byte) (h nats.Header, data []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var env map[string]json.RawMessage
	if err := dec.Decode(&env); err != nil || env == nil || dec.More() {
		return nil, nil, false
	}
	if v, ok := env["specversion"]; !ok || string(v) == "null" {
		return nil, nil, false
	}
	h = nats.Header{}
	seen := map[string]bool{}
	for name, v := range env {
		if seen[strings.ToLower(name)] {
			return nil, nil, false
		}
		seen[strings.ToLower(name)] = true
		if name == "data" {
			if string(v) != "null" {
				data = v
			}
			continue
		}
		switch {
		case v[0] == '"' && name != "entityversion":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, nil, false
			}
			h.Set(HeaderPrefix+name, percentEncode(s))
		case v[0] == 'n':
		case name == "entityversion" && (v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
			h.Set(HeaderPrefix+name, string(v))
		default:
			return nil, nil, false
		}
	}
	if strings.Count(string(body), `"`) != strings.Count(string(mustJSON(nil, env)), `"`) {
		return nil, nil, false // a name given twice: one of them lost
	}
	return h, data, true
}

// TestBinaryModeDecodesAsStructured: every valid sample, published in
// binary mode, decodes to the same Event as in structured mode.
func TestBinaryModeDecodesAsStructured(t *testing.T) {
	carried := 0
	for _, tt := range validCases() {
		_, subject, body := tt.build(t)
		h, data, ok := toBinary(body)
		if !ok {
			continue // an extension of another JSON type, or names in two cases
		}
		carried++
		t.Run(tt.name, func(t *testing.T) {
			want, err := Decode(subject, body)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeMsg(subject, h, data)
			if err != nil {
				t.Fatalf("DecodeMsg(%v, %s): %v", h, data, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("binary mode =\n%+v\nstructured =\n%+v", got, want)
			}
		})
	}
	if carried < 30 {
		t.Fatalf("only %d valid samples carried in binary mode", carried)
	}
}

// TestBinaryModeRefusesAsStructured: every invalid sample that binary mode
// can carry is refused in it too, the fault of an attribute named by its
// header, of data and of the subject as in structured mode.
func TestBinaryModeRefusesAsStructured(t *testing.T) {
	carried := 0
	for _, tt := range invalidCases() {
		_, subject, body := tt.build(t)
		h, data, ok := toBinary(body)
		if !ok {
			continue
		}
		carried++
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeMsg(subject, h, data)
			if err == nil && tt.wantField == "entityversion" && strings.Contains(tt.name, "string") {
				return // "1" as a JSON string is not a number; as a header it is the number's text
			}
			var ie *InvalidEventError
			if !errors.As(err, &ie) {
				t.Fatalf("DecodeMsg(%v, %s) = %v, want an *InvalidEventError", h, data, err)
			}
			want := tt.wantField
			if want != "" && want != "data" && !strings.HasPrefix(want, "data.") && want != "subject" {
				want = HeaderPrefix + want
			}
			if tt.wantField != "" && ie.Field != want {
				t.Errorf("Field = %q (%s), want %q", ie.Field, ie.Reason, want)
			}
		})
	}
	if carried < 50 {
		t.Fatalf("only %d invalid samples carried in binary mode", carried)
	}
}

// signerBinary is a valid signer upsert in binary mode.
func signerBinary(t *testing.T) (string, nats.Header, []byte) {
	t.Helper()
	h, data, ok := toBinary(mustJSON(t, sampleEnvelope(TypeSignerUpserted)))
	if !ok {
		t.Fatal("the sample cannot be put in binary mode")
	}
	return sampleSubject(TypeSignerUpserted), h, data
}

// TestBinaryModeHeaders: the rules of the binding's headers.
func TestBinaryModeHeaders(t *testing.T) {
	for _, tc := range []struct {
		name      string
		change    func(h nats.Header) nats.Header
		body      string // instead of the sample's data, when not ""
		wantField string // "-" for none: decoded
		check     func(t *testing.T, ev Event)
	}{
		{name: "percent-encoded source", change: func(h nats.Header) nats.Header { h.Set("ce-source", "/crm%2Feu%2520one"); return h },
			wantField: "-", check: func(t *testing.T, ev Event) {
				if ev.Source != "/crm/eu%20one" {
					t.Errorf("Source = %q", ev.Source)
				}
			}},
		{name: "lower-case hex", change: func(h nats.Header) nats.Header { h.Set("ce-id", "%e2%82%ac"); return h },
			wantField: "-", check: func(t *testing.T, ev Event) {
				if ev.ID != "€" {
					t.Errorf("ID = %q", ev.ID)
				}
			}},
		{name: "double-quoted value", change: func(h nats.Header) nats.Header { h.Set("ce-id", `"evt \"1\""`); return h },
			wantField: "-", check: func(t *testing.T, ev Event) {
				if ev.ID != `evt "1"` {
					t.Errorf("ID = %q", ev.ID)
				}
			}},
		{name: "header names in any case", change: func(h nats.Header) nats.Header {
			out := nats.Header{}
			for k, v := range h {
				out[strings.ToUpper(k)] = v
			}
			return out
		}, wantField: "-"},
		{name: "Content-Type for datacontenttype", change: func(h nats.Header) nats.Header {
			h.Del("ce-datacontenttype")
			h.Set("content-type", "application/json; charset=utf-8")
			return h
		}, wantField: "-"},
		{name: "traceparent kept", change: func(h nats.Header) nats.Header {
			h.Set("ce-traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
			return h
		}, wantField: "-", check: func(t *testing.T, ev Event) {
			if ev.TraceParent != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
				t.Errorf("TraceParent = %q", ev.TraceParent)
			}
		}},
		{name: "other extensions ignored", change: func(h nats.Header) nats.Header { h.Set("ce-partitionkey", "%zz"); return h }, wantField: "-"},
		{name: "bad percent-encoding", change: func(h nats.Header) nats.Header { h.Set("ce-source", "/crm%2"); return h }, wantField: "ce-source"},
		{name: "overlong UTF-8", change: func(h nats.Header) nats.Header { h.Set("ce-id", "a%C0%A0b"); return h }, wantField: "ce-id"},
		{name: "unterminated quotes", change: func(h nats.Header) nats.Header { h.Set("ce-id", `"evt`); return h }, wantField: "ce-id"},
		{name: "header twice", change: func(h nats.Header) nats.Header { h.Add("ce-type", string(TypeSignerUpserted)); return h }, wantField: "ce-type"},
		{name: "header twice in two cases", change: func(h nats.Header) nats.Header { h["CE-ID"] = []string{"other"}; return h }, wantField: "ce-id|CE-ID"},
		{name: "Content-Type disagrees", change: func(h nats.Header) nats.Header { h.Set("Content-Type", "text/plain"); return h }, wantField: "Content-Type"},
		{name: "Content-Type not JSON", change: func(h nats.Header) nats.Header {
			h.Del("ce-datacontenttype")
			h.Set("Content-Type", "text/plain")
			return h
		}, wantField: "Content-Type"},
		{name: "entityversion not a number", change: func(h nats.Header) nats.Header { h.Set("ce-entityversion", "seven"); return h }, wantField: "ce-entityversion"},
		{name: "entityversion 1e3", change: func(h nats.Header) nats.Header { h.Set("ce-entityversion", "1e3"); return h }, wantField: "-",
			check: func(t *testing.T, ev Event) {
				if ev.EntityVersion != 1000 {
					t.Errorf("EntityVersion = %d", ev.EntityVersion)
				}
			}},
		{name: "entityversion 0", change: func(h nats.Header) nats.Header { h.Set("ce-entityversion", "0"); return h }, wantField: "ce-entityversion"},
		{name: "type missing", change: func(h nats.Header) nats.Header { h.Del("ce-type"); return h }, wantField: "ce-type"},
		{name: "specversion 0.3", change: func(h nats.Header) nats.Header { h.Set("ce-specversion", "0.3"); return h }, wantField: "ce-specversion"},
		{name: "empty body", body: " ", wantField: ""},
		{name: "no body", body: "-", wantField: "data"},
		{name: "body an array", body: "[]", wantField: "data"},
		{name: "body null", body: "null", wantField: "data"},
		{name: "body with a value after it", body: `{"signer_id":"x"} {}`, wantField: ""},
		{name: "a name twice in data", body: `{"signer_id":"x","signer_id":"y"}`, wantField: "data.signer_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			subject, h, data := signerBinary(t)
			if tc.change != nil {
				h = tc.change(h)
			}
			switch tc.body {
			case "":
			case "-":
				data = nil
			default:
				data = []byte(tc.body)
			}
			ev, err := DecodeMsg(subject, h, data)
			if tc.wantField == "-" {
				if err != nil {
					t.Fatalf("DecodeMsg: %v", err)
				}
				if tc.check != nil {
					tc.check(t, ev)
				}
				return
			}
			var ie *InvalidEventError
			if !errors.As(err, &ie) {
				t.Fatalf("DecodeMsg = %+v, %v; want a fault of %q", ev, err, tc.wantField)
			}
			if want := strings.Split(tc.wantField, "|"); ie.Field != want[0] && ie.Field != want[len(want)-1] {
				t.Errorf("Field = %q (%s), want %q", ie.Field, ie.Reason, tc.wantField)
			}
			if strings.Contains(ie.Error(), "123456789") || strings.Contains(ie.Error(), "1970-01-31") {
				t.Errorf("the reason %q holds personal data", ie.Error())
			}
		})
	}
}

// TestStructuredModeByContentType: a message whose Content-Type is
// application/cloudevents is structured even with a ce-specversion header,
// and one without ce-specversion is structured as before.
func TestStructuredModeByContentType(t *testing.T) {
	body := mustJSON(t, sampleEnvelope(TypeConsumerUpserted))
	subject := sampleSubject(TypeConsumerUpserted)
	for _, h := range []nats.Header{nil, {"Nats-Msg-Id": {"x"}},
		{"Content-Type": {"application/cloudevents+json; charset=UTF-8"}, "ce-specversion": {"1.0"}}} {
		if IsBinary(h) {
			t.Errorf("IsBinary(%v) = true", h)
		}
		if _, err := DecodeMsg(subject, h, body); err != nil {
			t.Errorf("DecodeMsg(%v): %v", h, err)
		}
	}
}

// TestBinaryMsgRoundTrip: every type's sample, made a binary-mode message
// by NewBinaryMsg, decodes to the event it was made of, with its id and
// source percent-encoded where the binding says; and its headers hold the
// attributes the SDKs read.
func TestBinaryMsgRoundTrip(t *testing.T) {
	for _, typ := range Types {
		t.Run(string(typ), func(t *testing.T) {
			want, err := Decode(sampleSubject(typ), mustJSON(t, sampleEnvelope(typ)))
			if err != nil {
				t.Fatal(err)
			}
			want.ID, want.Source = `evt "1" 100%`, "/crm/a%20b"
			want.TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
			msg, err := NewBinaryMsg(want)
			if err != nil {
				t.Fatal(err)
			}
			if got := msg.Header.Get("ce-id"); got != "evt%20%221%22%20100%25" {
				t.Errorf("ce-id = %q", got)
			}
			for _, k := range []string{"ce-specversion", "ce-type", "ce-source", "ce-time", "ce-datacontenttype", "ce-entityversion", "Nats-Msg-Id"} {
				if msg.Header.Get(k) == "" {
					t.Errorf("no %s header", k)
				}
			}
			got, err := DecodeMsg(msg.Subject, msg.Header, msg.Data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("decoded =\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}
