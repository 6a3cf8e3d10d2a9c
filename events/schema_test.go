package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"sort"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// compileSchemas compiles every schema of Schemas, with format assertions
// on, keyed by event type.
func compileSchemas(t testing.TB) map[Type]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	out := make(map[Type]*jsonschema.Schema)
	for _, typ := range Types {
		b, err := fs.ReadFile(Schemas, SchemaName(typ))
		if err != nil {
			t.Fatalf("schema of %s: %v", typ, err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("schema of %s is not JSON: %v", typ, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		if id == "" {
			t.Fatalf("schema of %s has no $id", typ)
		}
		if err := c.AddResource(id, doc); err != nil {
			t.Fatalf("AddResource %s: %v", id, err)
		}
		s, err := c.Compile(id)
		if err != nil {
			t.Fatalf("Compile %s: %v", id, err)
		}
		out[typ] = s
	}
	return out
}

func TestSchemasCoverEveryType(t *testing.T) {
	entries, err := fs.ReadDir(Schemas, ".")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	var want []string
	for _, typ := range Types {
		want = append(want, SchemaName(typ))
	}
	sort.Strings(want)
	if len(got) != len(want) {
		t.Fatalf("Schemas holds %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("Schemas holds %v, want %v", got, want)
		}
	}
	for _, typ := range Types {
		b, _ := fs.ReadFile(Schemas, SchemaName(typ))
		var doc struct {
			Schema     string `json:"$schema"`
			ID         string `json:"$id"`
			Title      string `json:"title"`
			Properties struct {
				Type struct {
					Const string `json:"const"`
				} `json:"type"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if doc.Schema != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema = %q, want draft 2020-12", typ, doc.Schema)
		}
		if want := "https://github.com/lookup/persons/events/schema/" + SchemaName(typ); doc.ID != want {
			t.Errorf("%s: $id = %q, want %q", typ, doc.ID, want)
		}
		if doc.Title != string(typ) || doc.Properties.Type.Const != string(typ) {
			t.Errorf("%s: title %q, type const %q; want both %q", typ, doc.Title, doc.Properties.Type.Const, typ)
		}
	}
	compileSchemas(t)
}

// schemaOnlyCases are further samples for the agreement test: edges of
// formats that the decode tests leave out. valid is what both must say.
func schemaOnlyCases() []struct {
	sampleCase
	valid bool
} {
	type sc = sampleCase
	return []struct {
		sampleCase
		valid bool
	}{
		{sc{name: "time lower-case t and z", set: map[string]any{"time": "2026-11-22t10:00:00z"}}, true},
		{sc{name: "time lower-case t, upper-case Z", set: map[string]any{"time": "2026-11-22t10:00:00Z"}}, true},
		{sc{name: "time lower-case z, bad hour", set: map[string]any{"time": "2026-11-22t25:00:00z"}}, false},
		{sc{name: "time lower-case t without zone", set: map[string]any{"time": "2026-11-22t10:00:00"}}, false},
		{sc{name: "time leap second", set: map[string]any{"time": "2016-12-31T23:59:60Z"}, decoderOnly: onlyTimeStrict}, false},
		{sc{name: "time leap second with offset", set: map[string]any{"time": "2016-12-31T18:59:60-05:00"}, decoderOnly: onlyTimeStrict}, false},
		{sc{name: "time leap second not at 23:59 UTC", set: map[string]any{"time": "2016-12-31T12:00:60Z"}}, false},
		{sc{name: "time long fraction", set: map[string]any{"time": "2026-11-22T10:00:00.1234567891234Z"}}, true},
		{sc{name: "time comma fraction", set: map[string]any{"time": "2026-11-22T10:00:00,5Z"}, decoderOnly: onlyTimeLenient}, true},
		{sc{name: "time one-digit hour", set: map[string]any{"time": "2026-11-22T1:00:00Z"}, decoderOnly: onlyTimeLenient}, true},
		{sc{name: "time offset minute 60", set: map[string]any{"time": "2026-11-22T10:00:00+01:60"}, decoderOnly: onlyTimeLenient}, true},
		{sc{name: "time offset hour 25", set: map[string]any{"time": "2026-11-22T10:00:00+25:00"}}, false},
		{sc{name: "time empty fraction", set: map[string]any{"time": "2026-11-22T10:00:00.Z"}}, false},
		{sc{name: "time hour 24", set: map[string]any{"time": "2026-11-22T24:00:00Z"}}, false},
		{sc{name: "time offset hour 24", set: map[string]any{"time": "2026-11-22T10:00:00+24:00"}, decoderOnly: onlyTimeLenient}, true},
		{sc{name: "time offset without colon", set: map[string]any{"time": "2026-11-22T10:00:00+0100"}}, false},
		{sc{name: "time impossible date", set: map[string]any{"time": "2026-02-30T10:00:00Z"}}, false},
		{sc{name: "time date only", set: map[string]any{"time": "2026-11-22"}}, false},
		{sc{name: "time space separator", set: map[string]any{"time": "2026-11-22 10:00:00Z"}}, false},
		{sc{name: "source backslash", set: map[string]any{"source": `C:\crm`}}, false},
		{sc{name: "source backslash after a space", set: map[string]any{"source": `a b\c`}}, false},
		{sc{name: "source starting with a colon", set: map[string]any{"source": ":crm"}}, false},
		{sc{name: "source colon in first segment", set: map[string]any{"source": "1a:b"}}, false},
		{sc{name: "source with space", set: map[string]any{"source": "crm eu"}}, false},
		{sc{name: "source percent-escaped space", set: map[string]any{"source": "crm%20eu"}}, true},
		{sc{name: "source square brackets in path", set: map[string]any{"source": "urn:x[1]"}}, false},
		{sc{name: "source square bracket in query", set: map[string]any{"source": "https://crm.example/?a]"}}, false},
		{sc{name: "source square brackets in relative path", set: map[string]any{"source": "/a/[b]"}}, false},
		{sc{name: "source square brackets in fragment", set: map[string]any{"source": "urn:x#[b]"}}, false},
		{sc{name: "source second number sign", set: map[string]any{"source": "urn:x#a#b"}}, false},
		{sc{name: "source ipv6 host without scheme", set: map[string]any{"source": "//[::1]/crm"}}, true},
		{sc{name: "source ipv6 host with zone", set: map[string]any{"source": "http://[fe80::1%25eth0]/crm"}}, false},
		{sc{name: "source ipv6 host without brackets", set: map[string]any{"source": "http://fe80::1:8080/crm"}}, false},
		{sc{name: "source bad ipv6 host", set: map[string]any{"source": "http://[fe80::g]/crm"}}, false},
		{sc{name: "source ipv4 host and port", set: map[string]any{"source": "http://10.0.0.1:8080/crm"}}, true},
		{sc{name: "source urn", set: map[string]any{"source": "urn:uuid:" + otherID}}, true},
		{sc{name: "source ipv6 host", set: map[string]any{"source": "https://[::1]:8443/crm"}}, true},
		{sc{name: "datacontenttype with space before parameter", set: map[string]any{"datacontenttype": "application/json ;charset=utf-8"}}, true},
		{sc{name: "datacontenttype upper case", set: map[string]any{"datacontenttype": "Application/JSON"}}, false},
		{sc{name: "entityversion 2.000", set: map[string]any{"entityversion": raw("2.000")}}, true},
		{sc{name: "entityversion 12.5e1", set: map[string]any{"entityversion": raw("12.5e1")}}, true},
		{sc{name: "entityversion 0.5e1", set: map[string]any{"entityversion": raw("0.5e1")}}, true},
		{sc{name: "entityversion 1.25e1", set: map[string]any{"entityversion": raw("1.25e1")}}, false},
		{sc{name: "entityversion -0", set: map[string]any{"entityversion": raw("-0")}}, false},
		{sc{name: "ssn all zeros", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "000-00-0000"}}, true},
		{sc{name: "dob year 0001", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "0001-01-01"}}, true},
		{sc{name: "dob 5-digit year", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "10000-01-01"}}, false},
		{sc{name: "dob empty with spaces", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": " "}}, false},
		{sc{name: "address empty object", typ: TypeSignerUpserted, set: map[string]any{"data.address": map[string]any{}}}, false},
		{sc{name: "address with extra field", typ: TypeSignerUpserted, set: map[string]any{"data.address.county": "Sangamon"}}, true},
		{sc{name: "phone extension null", typ: TypeSignerUpserted, set: map[string]any{"data.phone.extension": nil}}, true},
		{sc{name: "business contact with signer fields", typ: TypeBusinessContactUpserted, set: map[string]any{"data.status": "ACTIVE"}}, true},
		{sc{name: "deleted with stale name", typ: TypeConsumerDeleted, set: map[string]any{"data.first_name": raw("1")}}, true},
	}
}

// TestSchemasAgreeWithDecode checks every sample event of the decode tests
// and of schemaOnlyCases against the JSON Schema of its type and against
// Decode, and requires them to agree, except for samples marked
// decoder-only (the schema cannot judge them; the reason is recorded).
func TestSchemasAgreeWithDecode(t *testing.T) {
	schemas := compileSchemas(t)
	type sample struct {
		sampleCase
		valid bool
	}
	var samples []sample
	for _, c := range validCases() {
		samples = append(samples, sample{c.sampleCase, true})
	}
	for _, c := range invalidCases() {
		samples = append(samples, sample{c.sampleCase, false})
	}
	for _, c := range schemaOnlyCases() {
		samples = append(samples, sample{c.sampleCase, c.valid})
	}
	decoderOnly := 0
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			typ, subject, body := s.build(t)
			_, decErr := Decode(subject, body)
			if decOK := decErr == nil; decOK != s.valid {
				t.Errorf("Decode valid = %v (%v), want %v\nbody %s", decOK, decErr, s.valid, body)
			}
			if s.decoderOnly != "" {
				decoderOnly++
				t.Logf("decoder-only: %s", s.decoderOnly)
				return
			}
			var schemaErr error
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
			if err != nil {
				schemaErr = err
			} else {
				schemaErr = schemas[typ].Validate(inst)
			}
			if schemaOK := schemaErr == nil; schemaOK != s.valid {
				t.Errorf("schema valid = %v (%v), want %v; Decode says %v\nbody %s", schemaOK, schemaErr, s.valid, decErr, body)
			}
		})
	}
	if decoderOnly > len(samples)/5 {
		t.Errorf("%d of %d samples are decoder-only; the agreement test checks too little", decoderOnly, len(samples))
	}
}

// FuzzSchemaAgreement checks that Decode and the JSON Schema of the event's
// type agree on arbitrary bodies, except for what the schemas cannot judge
// (the subject, duplicate names) and the
// time attribute where the stdlib's RFC 3339 and the schema's date-time
// differ.
func FuzzSchemaAgreement(f *testing.F) {
	addSampleEnvelopes(f)
	addBodies(f, schemaOnlyCases())
	addBodies(f, validCases())
	schemas := compileSchemas(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil || !json.Valid(body) {
			return // not JSON: TestDecodeSyntax's business
		}
		m, _ := inst.(map[string]any)
		typ, _ := m["type"].(string)
		schema := schemas[Type(typ)]
		if schema == nil {
			schema = schemas[TypeConsumerUpserted] // refuses any other type
		}
		// The subject that the ids in data call for, if any.
		subject := "persons.none"
		if d, ok := m["data"].(map[string]any); ok {
			cid, _ := d["consumer_id"].(string)
			switch Type(typ) {
			case TypeConsumerUpserted, TypeConsumerDeleted:
				subject = SubjectPrefixConsumer + cid
			case TypeBusinessContactUpserted, TypeBusinessContactDeleted:
				id, _ := d["contact_id"].(string)
				subject = SubjectPrefixBusinessContact + id
			case TypeSignerUpserted, TypeSignerDeleted:
				id, _ := d["signer_id"].(string)
				subject = SubjectPrefixSigner + cid + "." + id
			}
		}
		_, decErr := Decode(subject, body)
		var ie *InvalidEventError
		if errors.As(decErr, &ie) && (ie.Field == "subject" || ie.Reason == "appears more than once") {
			return
		}
		schemaErr := schema.Validate(inst)
		if (decErr == nil) == (schemaErr == nil) {
			return
		}
		if _, ok := m["time"].(string); ok {
			// The stdlib's RFC 3339 differs from the schema's date-time
			// (see Decode): no fault if they agree without the time.
			delete(m, "time")
			b := mustJSON(t, m)
			_, decErr2 := Decode(subject, b)
			inst2, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if (decErr2 == nil) == (schema.Validate(inst2) == nil) {
				return
			}
		}
		t.Fatalf("Decode: %v\nschema: %v\nbody %s", decErr, schemaErr, short(body))
	})
}

// FuzzSourceAgreement checks that Decode and the schemas agree on the
// source attribute (pattern and format uri-reference against sourceOK) for
// arbitrary strings, all else being the valid sample.
func FuzzSourceAgreement(f *testing.F) {
	var seeds []string
	for _, c := range invalidCases() {
		if s, ok := c.set["source"].(string); ok {
			seeds = append(seeds, s)
		}
	}
	for _, c := range schemaOnlyCases() {
		if s, ok := c.set["source"].(string); ok {
			seeds = append(seeds, s)
		}
	}
	for _, c := range validCases() {
		if s, ok := c.set["source"].(string); ok {
			seeds = append(seeds, s)
		}
	}
	seeds = append(seeds, "http://[::1]:80/a", "a:b//[c]", "//a@[::ffff:1.2.3.4]", "x:%41", "#", "?", "", "%", "a#b?c#")
	for _, s := range seeds {
		f.Add(s)
	}
	schema := compileSchemas(f)[TypeConsumerUpserted]
	f.Fuzz(func(t *testing.T, source string) {
		env := sampleEnvelope(TypeConsumerUpserted)
		env["source"] = source
		body := mustJSON(t, env)
		_, decErr := Decode(sampleSubject(TypeConsumerUpserted), body)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		schemaErr := schema.Validate(inst)
		if (decErr == nil) != (schemaErr == nil) {
			t.Fatalf("source %q: Decode: %v; schema: %v", source, decErr, schemaErr)
		}
	})
}
