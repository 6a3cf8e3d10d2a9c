package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// raw is a literal JSON value for setPath.
func raw(s string) json.RawMessage { return json.RawMessage(s) }

var del = deleteField{}

// sampleCase is a sample event: the sample of typ changed by set, or body.
type sampleCase struct {
	name    string
	typ     Type           // sample to start from; TypeConsumerUpserted when ""
	set     map[string]any // paths to change in the sample
	body    string         // raw body instead of the sample, when not ""
	subject string         // subject instead of the sample's, when not ""

	// decoderOnly, when not "", says why the JSON Schemas cannot judge this
	// sample as Decode does; the agreement test then skips the schema.
	decoderOnly string
}

// build returns the type, subject and body of c.
func (c sampleCase) build(tb testing.TB) (Type, string, []byte) {
	tb.Helper()
	typ := c.typ
	if typ == "" {
		typ = TypeConsumerUpserted
	}
	body := []byte(c.body)
	if c.body == "" {
		env := sampleEnvelope(typ)
		for path, v := range c.set {
			setPath(env, path, v)
		}
		body = mustJSON(tb, env)
	}
	subject := sampleSubject(typ)
	if c.subject != "" {
		subject = c.subject
	}
	return typ, subject, body
}

// invalidCase is a sample that Decode refuses, naming wantField.
type invalidCase struct {
	sampleCase
	wantField string
}

// Reasons for decoder-only samples.
const (
	onlySubject     = "the schema cannot see the subject"
	onlyDuplicate   = "JSON Schema validators see one of duplicate names, not both"
	onlyTimeStrict  = "time.Parse refuses leap seconds, which the schema's date-time allows"
	onlyTimeLenient = "time.Parse accepts a comma fraction, a one-digit hour and offsets to ±24:60, which the schema's date-time refuses"
)

func invalidCases() []invalidCase {
	signerSubject := sampleSubject(TypeSignerUpserted)
	type sc = sampleCase
	return []invalidCase{
		// The body.
		{sc{name: "body not JSON", body: `{"specversion":`}, ""},
		{sc{name: "body empty", body: ` `}, ""},
		{sc{name: "body array", body: `[1,2]`}, ""},
		{sc{name: "body string", body: `"event"`}, ""},
		{sc{name: "body trailing garbage", body: `{"specversion":"1.0"} x`}, ""},

		// specversion.
		{sc{name: "specversion missing", set: map[string]any{"specversion": del}}, "specversion"},
		{sc{name: "specversion null", set: map[string]any{"specversion": nil}}, "specversion"},
		{sc{name: "specversion empty", set: map[string]any{"specversion": ""}}, "specversion"},
		{sc{name: "specversion 0.3", set: map[string]any{"specversion": "0.3"}}, "specversion"},
		{sc{name: "specversion number", set: map[string]any{"specversion": raw("1.0")}}, "specversion"},

		// id.
		{sc{name: "id missing", set: map[string]any{"id": del}}, "id"},
		{sc{name: "id empty", set: map[string]any{"id": ""}}, "id"},
		{sc{name: "id null", set: map[string]any{"id": nil}}, "id"},
		{sc{name: "id number", set: map[string]any{"id": raw("42")}}, "id"},

		// source.
		{sc{name: "source missing", set: map[string]any{"source": del}}, "source"},
		{sc{name: "source empty", set: map[string]any{"source": ""}}, "source"},
		{sc{name: "source bad escape", set: map[string]any{"source": "crm%zz"}}, "source"},
		{sc{name: "source bad host", set: map[string]any{"source": "http://[::1/x"}}, "source"},
		{sc{name: "source bad port", set: map[string]any{"source": "http://crm:port/x"}}, "source"},
		{sc{name: "source object", set: map[string]any{"source": map[string]any{}}}, "source"},
		{sc{name: "source words", set: map[string]any{"source": "not a uri"}}, "source"},
		{sc{name: "source one space", set: map[string]any{"source": " "}}, "source"},
		{sc{name: "source trailing space", set: map[string]any{"source": "urn:x "}}, "source"},
		{sc{name: "source tab", set: map[string]any{"source": "urn:x\ty"}}, "source"},
		{sc{name: "source newline", set: map[string]any{"source": "urn:x\n"}}, "source"},
		{sc{name: "source control character", set: map[string]any{"source": "urn:x\x01"}}, "source"},
		{sc{name: "source DEL", set: map[string]any{"source": "urn:x\x7f"}}, "source"},
		{sc{name: "source non-ASCII", set: map[string]any{"source": "/crm/caf\u00e9"}}, "source"},
		{sc{name: "source non-ASCII host", set: map[string]any{"source": "https://b\u00fccher.example/"}}, "source"},
		{sc{name: "source double quote", set: map[string]any{"source": `urn:x"y`}}, "source"},
		{sc{name: "source less than", set: map[string]any{"source": "urn:x<y"}}, "source"},
		{sc{name: "source greater than", set: map[string]any{"source": "urn:x>y"}}, "source"},
		{sc{name: "source backslash in query", set: map[string]any{"source": `urn:x?a\b`}}, "source"},
		{sc{name: "source caret", set: map[string]any{"source": "urn:x^y"}}, "source"},
		{sc{name: "source backtick", set: map[string]any{"source": "urn:x`y"}}, "source"},
		{sc{name: "source open brace", set: map[string]any{"source": "urn:x{y"}}, "source"},
		{sc{name: "source pipe", set: map[string]any{"source": "urn:x|y"}}, "source"},
		{sc{name: "source close brace", set: map[string]any{"source": "urn:x}y"}}, "source"},
		{sc{name: "source lone percent", set: map[string]any{"source": "urn:x%"}}, "source"},
		{sc{name: "source short escape", set: map[string]any{"source": "urn:x%2"}}, "source"},
		{sc{name: "source bad escape in query", set: map[string]any{"source": "https://crm.example/?a=%zz"}}, "source"},
		{sc{name: "source short escape in query", set: map[string]any{"source": "https://crm.example/?a=%4"}}, "source"},
		{sc{name: "source bad escape in fragment", set: map[string]any{"source": "urn:x#%g0"}}, "source"},

		// type.
		{sc{name: "type missing", set: map[string]any{"type": del}}, "type"},
		{sc{name: "type unknown", set: map[string]any{"type": "persons.consumer.created.v1"}}, "type"},
		{sc{name: "type v2", set: map[string]any{"type": "persons.consumer.upserted.v2"}}, "type"},
		{sc{name: "type wrong case", set: map[string]any{"type": "Persons.Consumer.Upserted.v1"}}, "type"},
		{sc{name: "type number", set: map[string]any{"type": raw("1")}}, "type"},

		// time.
		{sc{name: "time empty", set: map[string]any{"time": ""}}, "time"},
		{sc{name: "time not RFC 3339", set: map[string]any{"time": "2026-11-22 10:00:00"}}, "time"},
		{sc{name: "time without zone", set: map[string]any{"time": "2026-11-22T10:00:00"}}, "time"},
		{sc{name: "time number", set: map[string]any{"time": raw("1763805600")}}, "time"},

		// datacontenttype.
		{sc{name: "datacontenttype empty", set: map[string]any{"datacontenttype": ""}}, "datacontenttype"},
		{sc{name: "datacontenttype text", set: map[string]any{"datacontenttype": "text/plain"}}, "datacontenttype"},
		{sc{name: "datacontenttype json suffix", set: map[string]any{"datacontenttype": "application/jsonx"}}, "datacontenttype"},
		{sc{name: "datacontenttype cloudevents", set: map[string]any{"datacontenttype": "application/cloudevents+json"}}, "datacontenttype"},
		{sc{name: "datacontenttype number", set: map[string]any{"datacontenttype": raw("1")}}, "datacontenttype"},

		// entityversion.
		{sc{name: "entityversion missing", set: map[string]any{"entityversion": del}}, "entityversion"},
		{sc{name: "entityversion null", set: map[string]any{"entityversion": nil}}, "entityversion"},
		{sc{name: "entityversion zero", set: map[string]any{"entityversion": raw("0")}}, "entityversion"},
		{sc{name: "entityversion zero float", set: map[string]any{"entityversion": raw("0.0")}}, "entityversion"},
		{sc{name: "entityversion negative", set: map[string]any{"entityversion": raw("-1")}}, "entityversion"},
		{sc{name: "entityversion fraction", set: map[string]any{"entityversion": raw("1.5")}}, "entityversion"},
		{sc{name: "entityversion small exponent", set: map[string]any{"entityversion": raw("1e-3")}}, "entityversion"},
		{sc{name: "entityversion string", set: map[string]any{"entityversion": "1"}}, "entityversion"},
		{sc{name: "entityversion bool", set: map[string]any{"entityversion": true}}, "entityversion"},
		{sc{name: "entityversion too big", set: map[string]any{"entityversion": raw("18446744073709551616")}}, "entityversion"},
		{sc{name: "entityversion too big exponent", set: map[string]any{"entityversion": raw("1e20")}}, "entityversion"},

		// data.
		{sc{name: "data missing", set: map[string]any{"data": del}}, "data"},
		{sc{name: "data null", set: map[string]any{"data": nil}}, "data"},
		{sc{name: "data array", set: map[string]any{"data": []any{}}}, "data"},
		{sc{name: "data string", set: map[string]any{"data": `{"consumer_id":"x"}`}}, "data"},
		{sc{name: "data empty object", set: map[string]any{"data": map[string]any{}}}, "data.consumer_id"},

		// Ids.
		{sc{name: "consumer_id missing", set: map[string]any{"data.consumer_id": del}}, "data.consumer_id"},
		{sc{name: "consumer_id null", set: map[string]any{"data.consumer_id": nil}}, "data.consumer_id"},
		{sc{name: "consumer_id empty", set: map[string]any{"data.consumer_id": ""}}, "data.consumer_id"},
		{sc{name: "consumer_id number", set: map[string]any{"data.consumer_id": raw("7")}}, "data.consumer_id"},
		{sc{name: "consumer_id not uuid", set: map[string]any{"data.consumer_id": "consumer-1"}}, "data.consumer_id"},
		{sc{name: "consumer_id urn", set: map[string]any{"data.consumer_id": "urn:uuid:" + testConsumerID}}, "data.consumer_id"},
		{sc{name: "consumer_id braces", set: map[string]any{"data.consumer_id": "{" + testConsumerID + "}"}}, "data.consumer_id"},
		{sc{name: "consumer_id no dashes", set: map[string]any{"data.consumer_id": strings.ReplaceAll(testConsumerID, "-", "")}}, "data.consumer_id"},
		{sc{name: "consumer_id non-hex", set: map[string]any{"data.consumer_id": "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e0g"}}, "data.consumer_id"},
		{sc{name: "consumer_id dash misplaced", set: map[string]any{"data.consumer_id": "0b7e0f4e3-a1c-4c7e-9a52-7f3f2c1d9e01"}}, "data.consumer_id"},
		{sc{name: "business_id missing", set: map[string]any{"data.business_id": del}}, "data.business_id"},
		{sc{name: "business_id not uuid", set: map[string]any{"data.business_id": "acme"}}, "data.business_id"},
		{sc{name: "consumer deleted id missing", typ: TypeConsumerDeleted, set: map[string]any{"data.consumer_id": del}}, "data.consumer_id"},
		{sc{name: "contact_id missing", typ: TypeBusinessContactUpserted, set: map[string]any{"data.contact_id": del}}, "data.contact_id"},
		{sc{name: "contact_id not uuid", typ: TypeBusinessContactUpserted, set: map[string]any{"data.contact_id": "c-1"}}, "data.contact_id"},
		{sc{name: "contact business_id bad", typ: TypeBusinessContactUpserted, set: map[string]any{"data.business_id": "b"}}, "data.business_id"},
		{sc{name: "contact deleted id bad", typ: TypeBusinessContactDeleted, set: map[string]any{"data.contact_id": "c-1"}}, "data.contact_id"},
		{sc{name: "signer_id missing", typ: TypeSignerUpserted, set: map[string]any{"data.signer_id": del}}, "data.signer_id"},
		{sc{name: "signer consumer_id bad", typ: TypeSignerUpserted, set: map[string]any{"data.consumer_id": "x"}}, "data.consumer_id"},
		{sc{name: "signer deleted signer_id bad", typ: TypeSignerDeleted, set: map[string]any{"data.signer_id": "x"}}, "data.signer_id"},
		{sc{name: "signer deleted consumer_id missing", typ: TypeSignerDeleted, set: map[string]any{"data.consumer_id": del}}, "data.consumer_id"},

		// Names.
		{sc{name: "first_name missing", set: map[string]any{"data.first_name": del}}, "data.first_name"},
		{sc{name: "first_name null", set: map[string]any{"data.first_name": nil}}, "data.first_name"},
		{sc{name: "first_name empty", set: map[string]any{"data.first_name": ""}}, "data.first_name"},
		{sc{name: "first_name number", set: map[string]any{"data.first_name": raw("1")}}, "data.first_name"},
		{sc{name: "last_name missing", set: map[string]any{"data.last_name": del}}, "data.last_name"},
		{sc{name: "middle_name number", set: map[string]any{"data.middle_name": raw("1")}}, "data.middle_name"},
		{sc{name: "contact last_name empty", typ: TypeBusinessContactUpserted, set: map[string]any{"data.last_name": ""}}, "data.last_name"},
		{sc{name: "signer first_name missing", typ: TypeSignerUpserted, set: map[string]any{"data.first_name": del}}, "data.first_name"},
		{sc{name: "signer last_name array", typ: TypeSignerUpserted, set: map[string]any{"data.last_name": []any{"T"}}}, "data.last_name"},

		// Signer flags and enums.
		{sc{name: "hipaa missing", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": del}}, "data.hipaa_authorized"},
		{sc{name: "hipaa null", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": nil}}, "data.hipaa_authorized"},
		{sc{name: "hipaa string", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": "yes"}}, "data.hipaa_authorized"},
		{sc{name: "hipaa number", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": raw("1")}}, "data.hipaa_authorized"},
		{sc{name: "account_access missing", typ: TypeSignerUpserted, set: map[string]any{"data.account_access": del}}, "data.account_access"},
		{sc{name: "account_access unknown", typ: TypeSignerUpserted, set: map[string]any{"data.account_access": "ALL"}}, "data.account_access"},
		{sc{name: "account_access lower case", typ: TypeSignerUpserted, set: map[string]any{"data.account_access": "phi"}}, "data.account_access"},
		{sc{name: "status missing", typ: TypeSignerUpserted, set: map[string]any{"data.status": nil}}, "data.status"},
		{sc{name: "status unknown", typ: TypeSignerUpserted, set: map[string]any{"data.status": "DELETED"}}, "data.status"},
		{sc{name: "status number", typ: TypeSignerUpserted, set: map[string]any{"data.status": raw("1")}}, "data.status"},
		{sc{name: "type missing", typ: TypeSignerUpserted, set: map[string]any{"data.type": ""}}, "data.type"},
		{sc{name: "type unknown", typ: TypeSignerUpserted, set: map[string]any{"data.type": "FRIEND"}}, "data.type"},

		// Address and phone.
		{sc{name: "address string", typ: TypeSignerUpserted, set: map[string]any{"data.address": "1 Main St"}}, "data.address"},
		{sc{name: "address line1 missing", typ: TypeSignerUpserted, set: map[string]any{"data.address.line1": del}}, "data.address.line1"},
		{sc{name: "address city empty", typ: TypeSignerUpserted, set: map[string]any{"data.address.city": ""}}, "data.address.city"},
		{sc{name: "address state null", typ: TypeSignerUpserted, set: map[string]any{"data.address.state": nil}}, "data.address.state"},
		{sc{name: "address zip_code number", typ: TypeSignerUpserted, set: map[string]any{"data.address.zip_code": raw("62701")}}, "data.address.zip_code"},
		{sc{name: "address country missing", typ: TypeSignerUpserted, set: map[string]any{"data.address.country": del}}, "data.address.country"},
		{sc{name: "address line2 number", typ: TypeSignerUpserted, set: map[string]any{"data.address.line2": raw("2")}}, "data.address.line2"},
		{sc{name: "phone array", typ: TypeSignerUpserted, set: map[string]any{"data.phone": []any{}}}, "data.phone"},
		{sc{name: "phone country_code missing", typ: TypeSignerUpserted, set: map[string]any{"data.phone.country_code": del}}, "data.phone.country_code"},
		{sc{name: "phone area_code empty", typ: TypeSignerUpserted, set: map[string]any{"data.phone.area_code": ""}}, "data.phone.area_code"},
		{sc{name: "phone number missing", typ: TypeSignerUpserted, set: map[string]any{"data.phone.number": del}}, "data.phone.number"},
		{sc{name: "phone number number", typ: TypeSignerUpserted, set: map[string]any{"data.phone.number": raw("5550100")}}, "data.phone.number"},

		// SSN.
		{sc{name: "ssn 8 digits", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "12345678"}}, "data.social_security_number"},
		{sc{name: "ssn 10 digits", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "1234567890"}}, "data.social_security_number"},
		{sc{name: "ssn dashes misplaced", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "123-456-789"}}, "data.social_security_number"},
		{sc{name: "ssn spaces", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "123 45 6789"}}, "data.social_security_number"},
		{sc{name: "ssn letters", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "12345678X"}}, "data.social_security_number"},
		{sc{name: "ssn one dash", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "123-456789"}}, "data.social_security_number"},
		{sc{name: "ssn number", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": raw("123456789")}}, "data.social_security_number"},

		// Date of birth.
		{sc{name: "dob 29 Feb non-leap", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "2023-02-29"}}, "data.date_of_birth"},
		{sc{name: "dob 29 Feb 1900", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1900-02-29"}}, "data.date_of_birth"},
		{sc{name: "dob 31 April", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-04-31"}}, "data.date_of_birth"},
		{sc{name: "dob month 13", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-13-01"}}, "data.date_of_birth"},
		{sc{name: "dob month 0", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-00-10"}}, "data.date_of_birth"},
		{sc{name: "dob day 0", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-01-00"}}, "data.date_of_birth"},
		{sc{name: "dob short month", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-1-01"}}, "data.date_of_birth"},
		{sc{name: "dob US order", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "01/31/1970"}}, "data.date_of_birth"},
		{sc{name: "dob with time", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1970-01-31T00:00:00Z"}}, "data.date_of_birth"},
		{sc{name: "dob 29 Feb far future non-leap", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "2999-02-29"}}, "data.date_of_birth"},
		{sc{name: "dob number", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": raw("19700131")}}, "data.date_of_birth"},

		// Names are case-sensitive; names of the contract appear once.
		{sc{name: "specversion only in other case", set: map[string]any{"specversion": del, "SpecVersion": "1.0"}}, "specversion"},
		{sc{name: "data field only in other case", set: map[string]any{"data.first_name": del, "data.First_Name": "Ada"}}, "data.first_name"},
		{sc{name: "address field only in other case", typ: TypeSignerUpserted, set: map[string]any{"data.address.city": del, "data.address.City": "X"}}, "data.address.city"},
		{sc{name: "duplicate attribute", body: `{"specversion":"1.0","id":"a","id":"b","source":"urn:x","type":"persons.consumer.deleted.v1","entityversion":1,"data":{"consumer_id":"` + testConsumerID + `"}}`,
			typ: TypeConsumerDeleted, decoderOnly: onlyDuplicate}, "id"},
		{sc{name: "duplicate data field", body: `{"specversion":"1.0","id":"a","source":"urn:x","type":"persons.consumer.deleted.v1","entityversion":1,"data":{"consumer_id":"` + testConsumerID + `","consumer_id":"` + otherID + `"}}`,
			typ: TypeConsumerDeleted, decoderOnly: onlyDuplicate}, "data.consumer_id"},
		{sc{name: "duplicate address field", typ: TypeSignerUpserted, body: strings.Replace(string(mustJSON(nil, sampleEnvelope(TypeSignerUpserted))), `"city":`, `"city":"A","city":`, 1),
			decoderOnly: onlyDuplicate}, "data.address.city"},
		{sc{name: "duplicate extension attribute", body: `{"specversion":"1.0","id":"a","source":"urn:x","type":"persons.consumer.deleted.v1","entityversion":1,"x":1,"x":2,"data":{"consumer_id":"` + testConsumerID + `"}}`,
			typ: TypeConsumerDeleted, decoderOnly: onlyDuplicate}, "x"},
		{sc{name: "duplicate inside unknown data field", body: `{"specversion":"1.0","id":"a","source":"urn:x","type":"persons.consumer.deleted.v1","entityversion":1,"data":{"consumer_id":"` + testConsumerID + `","tags":[{"a":1,"a":2}]}}`,
			typ: TypeConsumerDeleted, decoderOnly: onlyDuplicate}, "data.tags.0.a"},
		{sc{name: "duplicate before syntax error", body: `{"id":"a","id":"b",}`}, "id"},
		{sc{name: "syntax error before duplicate", body: `{"id":"a",,"id":"b"}`}, ""},
		{sc{name: "duplicate after a type fault", body: `{"specversion":1,"id":"a","id":"b"}`}, "id"},
		{sc{name: "syntax error after a type fault", body: `{"specversion":1,"id":}`}, ""},
		{sc{name: "invalid escape in string", body: `{"specversion":"1.\x0"}`}, ""},
		{sc{name: "control character in string", body: "{\"specversion\":\"1.\t0\"}"}, ""},
		{sc{name: "number without digits", body: `{"entityversion":-}`}, ""},
		{sc{name: "leading zero", body: `{"entityversion":01}`}, ""},
		{sc{name: "unclosed data", body: `{"data":{"a":[1,2}}`}, ""},
		{sc{name: "nested garbage in extension", body: `{"ext":{"a":tru}}`}, ""},

		// Subject.
		{sc{name: "subject empty", subject: " ", decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject other consumer", subject: SubjectPrefixConsumer + otherID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject consumer event on contact subject", subject: SubjectPrefixBusinessContact + testConsumerID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject consumer event on signer subject", subject: SubjectPrefixSigner + testConsumerID + "." + testSignerID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject prefix upper-case", subject: "PERSONS.CONSUMER." + testConsumerID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject signer without dot", typ: TypeSignerDeleted, subject: SubjectPrefixSigner + testConsumerID + "_" + testSignerID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject signer too long", typ: TypeSignerDeleted, subject: SubjectPrefixSigner + testConsumerID + "." + testSignerID + "0", decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject extra token", subject: SubjectPrefixConsumer + testConsumerID + ".x", decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject signer ids swapped", typ: TypeSignerUpserted, subject: SubjectPrefixSigner + testSignerID + "." + testConsumerID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject signer other signer", typ: TypeSignerDeleted, subject: SubjectPrefixSigner + testConsumerID + "." + otherID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject signer on consumer subject", typ: TypeSignerUpserted, subject: SubjectPrefixConsumer + testConsumerID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject contact deleted other", typ: TypeBusinessContactDeleted, subject: SubjectPrefixBusinessContact + otherID, decoderOnly: onlySubject}, "subject"},
		{sc{name: "subject data of other type", typ: TypeSignerUpserted, set: map[string]any{"type": string(TypeConsumerUpserted)}, subject: signerSubject}, "data.business_id"},
	}
}

func TestDecodeInvalid(t *testing.T) {
	for _, tt := range invalidCases() {
		t.Run(tt.name, func(t *testing.T) {
			_, subject, body := tt.build(t)
			ev, err := Decode(subject, body)
			if err == nil {
				t.Fatalf("Decode(%s) = %+v, nil; want an error for field %q", body, ev, tt.wantField)
			}
			var ie *InvalidEventError
			if !errors.As(err, &ie) {
				t.Fatalf("Decode error = %T %v, want *InvalidEventError", err, err)
			}
			if !errors.Is(err, ErrInvalidEvent) {
				t.Errorf("errors.Is(%v, ErrInvalidEvent) = false, want true", err)
			}
			if ie.Field != tt.wantField {
				t.Errorf("Field = %q, want %q (reason %q)", ie.Field, tt.wantField, ie.Reason)
			}
			if ie.Reason == "" {
				t.Errorf("Reason is empty")
			}
			if !reflect.DeepEqual(ev, Event{}) {
				t.Errorf("Event = %+v on error, want zero", ev)
			}
		})
	}
}

// validCase is a sample that Decode accepts, as wantData with wantTime
// (when not nil, else the sample's time) and wantVersion (when not 0, else 7).
type validCase struct {
	sampleCase
	wantData    any
	wantTime    *time.Time
	wantVersion uint64
}

// dayAfterTomorrow is a date of birth after today's date in every time zone.
var dayAfterTomorrow = time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)

func validCases() []validCase {
	upper := strings.ToUpper
	fullSigner := Signer{
		SignerID: testSignerID, ConsumerID: testConsumerID,
		FirstName: "Alan", MiddleName: "Mathison", LastName: "Turing",
		HIPAAAuthorized: true, AccountAccess: AccountAccessPHIAndAccountUpdates,
		Status: SignerStatusActive, Type: SignerTypePowerOfAttorney,
		Address: &Address{Line1: "1 Main St", Line2: "Apt 2", City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
		Phone:   &Phone{CountryCode: "1", AreaCode: "217", Number: "5550100", Extension: "42"},
		SSN:     "123456789", DateOfBirth: "1970-01-31",
	}
	minimalSigner := Signer{
		SignerID: testSignerID, ConsumerID: testConsumerID,
		FirstName: "Alan", LastName: "Turing",
		AccountAccess: AccountAccessNone, Status: SignerStatusPending, Type: SignerTypeGuardian,
	}
	consumer := Consumer{ConsumerID: testConsumerID, BusinessID: testBusinessID, FirstName: "Ada", MiddleName: "King", LastName: "Lovelace"}
	type sc = sampleCase
	return []validCase{
		{sampleCase: sc{name: "consumer upserted", typ: TypeConsumerUpserted}, wantData: consumer},
		{sampleCase: sc{name: "consumer deleted", typ: TypeConsumerDeleted}, wantData: ConsumerDeleted{ConsumerID: testConsumerID}},
		{sampleCase: sc{name: "contact upserted", typ: TypeBusinessContactUpserted},
			wantData: BusinessContact{ContactID: testContactID, BusinessID: testBusinessID, FirstName: "Grace", MiddleName: "Brewster", LastName: "Hopper"}},
		{sampleCase: sc{name: "contact deleted", typ: TypeBusinessContactDeleted}, wantData: BusinessContactDeleted{ContactID: testContactID}},
		{sampleCase: sc{name: "signer upserted with everything", typ: TypeSignerUpserted}, wantData: fullSigner},
		{sampleCase: sc{name: "signer deleted", typ: TypeSignerDeleted}, wantData: SignerDeleted{SignerID: testSignerID, ConsumerID: testConsumerID}},

		{sampleCase: sc{name: "upper-case ids are lower-cased", typ: TypeSignerUpserted,
			set: map[string]any{"data.signer_id": upper(testSignerID), "data.consumer_id": upper(testConsumerID)}},
			wantData: fullSigner},
		{sampleCase: sc{name: "upper-case subject matches", typ: TypeSignerUpserted,
			subject: SubjectPrefixSigner + upper(testConsumerID) + "." + upper(testSignerID)},
			wantData: fullSigner},
		{sampleCase: sc{name: "upper-case business_id lower-cased", typ: TypeConsumerUpserted,
			set: map[string]any{"data.business_id": upper(testBusinessID)}}, wantData: consumer},
		{sampleCase: sc{name: "ssn without dashes", typ: TypeSignerUpserted,
			set: map[string]any{"data.social_security_number": "123456789"}}, wantData: fullSigner},
		{sampleCase: sc{name: "optional fields absent", typ: TypeSignerUpserted,
			set: map[string]any{
				"data.middle_name": del, "data.address": del, "data.phone": del,
				"data.social_security_number": del, "data.date_of_birth": del,
				"data.hipaa_authorized": false, "data.account_access": "NONE", "data.status": "PENDING", "data.type": "GUARDIAN",
			}},
			wantData: minimalSigner},
		{sampleCase: sc{name: "optional fields null", typ: TypeSignerUpserted,
			set: map[string]any{
				"data.middle_name": nil, "data.address": nil, "data.phone": nil,
				"data.social_security_number": nil, "data.date_of_birth": nil,
				"data.hipaa_authorized": false, "data.account_access": "NONE", "data.status": "PENDING", "data.type": "GUARDIAN",
			}},
			wantData: minimalSigner},
		{sampleCase: sc{name: "optional fields empty", typ: TypeSignerUpserted,
			set: map[string]any{
				"data.middle_name": "", "data.social_security_number": "", "data.date_of_birth": "",
				"data.address": del, "data.phone": del,
				"data.hipaa_authorized": false, "data.account_access": "NONE", "data.status": "PENDING", "data.type": "GUARDIAN",
			}},
			wantData: minimalSigner},
		{sampleCase: sc{name: "address and phone without optional parts", typ: TypeSignerUpserted,
			set: map[string]any{"data.address.line2": del, "data.phone.extension": nil}},
			wantData: func() Signer {
				s := fullSigner
				a, p := *s.Address, *s.Phone
				a.Line2, p.Extension = "", ""
				s.Address, s.Phone = &a, &p
				return s
			}()},
		{sampleCase: sc{name: "dob 29 Feb leap year", typ: TypeSignerUpserted,
			set: map[string]any{"data.date_of_birth": "2000-02-29"}},
			wantData: func() Signer { s := fullSigner; s.DateOfBirth = "2000-02-29"; return s }()},
		// Validation depends on the event alone, never on the clock: a
		// date of birth after today is a calendar date like any other.
		{sampleCase: sc{name: "dob far in the future", typ: TypeSignerUpserted,
			set: map[string]any{"data.date_of_birth": "2999-01-01"}},
			wantData: func() Signer { s := fullSigner; s.DateOfBirth = "2999-01-01"; return s }()},
		{sampleCase: sc{name: "dob the day after tomorrow", typ: TypeSignerUpserted,
			set: map[string]any{"data.date_of_birth": dayAfterTomorrow}},
			wantData: func() Signer { s := fullSigner; s.DateOfBirth = dayAfterTomorrow; return s }()},
		{sampleCase: sc{name: "unknown data fields ignored", typ: TypeConsumerUpserted,
			set: map[string]any{"data.nickname": "Ada", "data.tags": []any{1, 2}}}, wantData: consumer},
		{sampleCase: sc{name: "extension attributes ignored", typ: TypeConsumerUpserted,
			set: map[string]any{"traceparent": "00-abc-def-01", "partitionkey": raw("3")}}, wantData: consumer},
		{sampleCase: sc{name: "traceparent of another JSON type ignored", typ: TypeConsumerUpserted,
			set: map[string]any{"traceparent": raw("3")}}, wantData: consumer},
		{sampleCase: sc{name: "attribute in other case is an extension", typ: TypeConsumerUpserted,
			set: map[string]any{"Type": "something else", "SPECVERSION": 2, "Data": nil}}, wantData: consumer},
		{sampleCase: sc{name: "data field in other case is unknown", typ: TypeConsumerUpserted,
			set: map[string]any{"data.First_Name": raw("1"), "data.CONSUMER_ID": "x"}}, wantData: consumer},
		{sampleCase: sc{name: "field of another type is unknown", typ: TypeConsumerDeleted,
			set: map[string]any{"data.signer_id": raw("[1]"), "data.first_name": nil}}, wantData: ConsumerDeleted{ConsumerID: testConsumerID}},
		{sampleCase: sc{name: "escaped strings", typ: TypeConsumerUpserted,
			set: map[string]any{"data.first_name": "A\"d\\a\u00e9\n", "data.last_name": "Lové 😀"}},
			wantData: func() Consumer { c := consumer; c.FirstName, c.LastName = "A\"d\\a\u00e9\n", "Lové 😀"; return c }()},
		{sampleCase: sc{name: "time absent", typ: TypeConsumerUpserted, set: map[string]any{"time": del}}, wantData: consumer, wantTime: &time.Time{}},
		{sampleCase: sc{name: "time null", typ: TypeConsumerUpserted, set: map[string]any{"time": nil}}, wantData: consumer, wantTime: &time.Time{}},
		{sampleCase: sc{name: "time with offset", typ: TypeConsumerUpserted, set: map[string]any{"time": "2026-11-22T11:00:00.5+01:00"}},
			wantData: consumer},
		{sampleCase: sc{name: "time lower-case t and z", typ: TypeConsumerUpserted, set: map[string]any{"time": "2026-11-22t10:00:00.5z"}},
			wantData: consumer},
		{sampleCase: sc{name: "time lower-case t with offset", typ: TypeConsumerUpserted, set: map[string]any{"time": "2026-11-22t11:00:00.5+01:00"}},
			wantData: consumer},
		{sampleCase: sc{name: "time lower-case z only", typ: TypeConsumerUpserted, set: map[string]any{"time": "2026-11-22T10:00:00.5z"}},
			wantData: consumer},
		{sampleCase: sc{name: "datacontenttype absent", typ: TypeConsumerUpserted, set: map[string]any{"datacontenttype": del}}, wantData: consumer},
		{sampleCase: sc{name: "datacontenttype null", typ: TypeConsumerUpserted, set: map[string]any{"datacontenttype": nil}}, wantData: consumer},
		{sampleCase: sc{name: "datacontenttype with charset", typ: TypeConsumerUpserted, set: map[string]any{"datacontenttype": "application/json; charset=utf-8"}}, wantData: consumer},
		{sampleCase: sc{name: "source URL", typ: TypeConsumerUpserted, set: map[string]any{"source": "https://crm.example.com:8443/events?x=1"}}, wantData: consumer},
		{sampleCase: sc{name: "source relative path", typ: TypeConsumerUpserted, set: map[string]any{"source": "/crm/eu-1"}}, wantData: consumer},
		{sampleCase: sc{name: "source with escape", typ: TypeConsumerUpserted, set: map[string]any{"source": "/crm/a%20b"}}, wantData: consumer},
		{sampleCase: sc{name: "source escape in query", typ: TypeConsumerUpserted, set: map[string]any{"source": "https://crm.example/?a=%2Fb&c=%e2%82%ac"}}, wantData: consumer},
		{sampleCase: sc{name: "source every allowed character", typ: TypeConsumerUpserted,
			set: map[string]any{"source": "https://u:p@crm.example:8443/a-._~!$&'()*+,;=:@/b?c=/?:@#d/?"}}, wantData: consumer},
		{sampleCase: sc{name: "source tag URI", typ: TypeConsumerUpserted, set: map[string]any{"source": "tag:example.com,2026:crm"}}, wantData: consumer},
		{sampleCase: sc{name: "source network-path reference", typ: TypeConsumerUpserted, set: map[string]any{"source": "//crm.example/eu"}}, wantData: consumer},
		{sampleCase: sc{name: "source fragment only", typ: TypeConsumerUpserted, set: map[string]any{"source": "#crm"}}, wantData: consumer},
		{sampleCase: sc{name: "id any string", typ: TypeConsumerUpserted, set: map[string]any{"id": "not a uuid, still an id"}}, wantData: consumer},
		{sampleCase: sc{name: "entityversion 1", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("1")}}, wantData: consumer, wantVersion: 1},
		{sampleCase: sc{name: "entityversion 1.0", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("1.0")}}, wantData: consumer, wantVersion: 1},
		{sampleCase: sc{name: "entityversion 1e3", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("1e3")}}, wantData: consumer, wantVersion: 1000},
		{sampleCase: sc{name: "entityversion max", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("18446744073709551615")}},
			wantData: consumer, wantVersion: 18446744073709551615},
	}
}

func TestDecodeValid(t *testing.T) {
	wantTime := time.Date(2026, 11, 22, 10, 0, 0, 500_000_000, time.UTC)
	for _, tt := range validCases() {
		t.Run(tt.name, func(t *testing.T) {
			typ, subject, body := tt.build(t)
			var env map[string]any
			if err := json.Unmarshal(body, &env); err != nil {
				t.Fatal(err)
			}
			got, err := Decode(subject, body)
			if err != nil {
				t.Fatalf("Decode(%s): %v", body, err)
			}
			wantT := wantTime
			if tt.wantTime != nil {
				wantT = *tt.wantTime
			}
			if !got.Time.Equal(wantT) {
				t.Errorf("Time = %v, want %v", got.Time, wantT)
			}
			wantV := tt.wantVersion
			if wantV == 0 {
				wantV = 7
			}
			wantID, _ := env["id"].(string)
			wantSource, _ := env["source"].(string)
			wantTrace, _ := env["traceparent"].(string) // the tracing extension is kept (a string only)
			want := Event{ID: wantID, Source: wantSource, Type: typ, EntityVersion: wantV, Data: tt.wantData, TraceParent: wantTrace}
			got.Time = time.Time{}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Decode =\n%+v\nwant\n%+v", got, want)
			}
			if s := got.Subject(); s != strings.ToLower(subject) {
				t.Errorf("Subject() = %q, want %q", s, strings.ToLower(subject))
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	schemas := compileSchemas(t)
	for _, typ := range Types {
		t.Run(string(typ), func(t *testing.T) {
			// Decode the sample to get a typed data value, then go around.
			first, err := Decode(sampleSubject(typ), mustJSON(t, sampleEnvelope(typ)))
			if err != nil {
				t.Fatalf("Decode sample: %v", err)
			}
			ev, err := NewEvent("urn:example:test", 3, first.Data)
			if err != nil {
				t.Fatalf("NewEvent: %v", err)
			}
			if ev.Type != typ {
				t.Errorf("NewEvent Type = %q, want %q", ev.Type, typ)
			}
			if !ValidUUID(ev.ID) {
				t.Errorf("NewEvent ID = %q, want a UUID", ev.ID)
			}
			if ev.Time.IsZero() || ev.Time.Location() != time.UTC || time.Since(ev.Time) > time.Minute {
				t.Errorf("NewEvent Time = %v, want now in UTC", ev.Time)
			}
			body, err := Encode(ev)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			got, err := Decode(ev.Subject(), body)
			if err != nil {
				t.Fatalf("Decode(Encode(e)): %v\nbody %s", err, body)
			}
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if err := schemas[typ].Validate(inst); err != nil {
				t.Errorf("Encode(e) breaks the schema of %s: %v\nbody %s", typ, err, body)
			}
			if !got.Time.Equal(ev.Time) {
				t.Errorf("Time = %v, want %v", got.Time, ev.Time)
			}
			got.Time, ev.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(got, ev) {
				t.Errorf("round trip =\n%+v\nwant\n%+v", got, ev)
			}
		})
	}
}

func TestEncodeForm(t *testing.T) {
	ev, err := NewEvent("urn:example:test", 12, SignerDeleted{SignerID: testSignerID, ConsumerID: testConsumerID})
	if err != nil {
		t.Fatal(err)
	}
	body, err := Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{
		"specversion":     `"1.0"`,
		"datacontenttype": `"application/json"`,
		"entityversion":   `12`,
		"type":            `"persons.authorized_signer.deleted.v1"`,
		"id":              `"` + ev.ID + `"`,
	} {
		if got := string(m[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	var ts string
	if err := json.Unmarshal(m["time"], &ts); err != nil {
		t.Fatalf("time: %v", err)
	}
	if _, err := time.Parse(time.RFC3339, ts); err != nil {
		t.Errorf("time %q is not RFC 3339: %v", ts, err)
	}

	ev.Time = time.Time{}
	body, err = Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), `"time"`) {
		t.Errorf("Encode with zero time = %s, want no time attribute", body)
	}

	// Unknown optional fields are left out, never null.
	s := Signer{SignerID: testSignerID, ConsumerID: testConsumerID, FirstName: "A", LastName: "B",
		AccountAccess: AccountAccessNone, Status: SignerStatusActive, Type: SignerTypeParent}
	ev, err = NewEvent("urn:example:test", 1, s)
	if err != nil {
		t.Fatal(err)
	}
	body, err = Encode(ev)
	if err != nil {
		t.Fatal(err)
	}
	for _, absent := range []string{"middle_name", "address", "phone", "social_security_number", "date_of_birth", "null"} {
		if strings.Contains(string(body), absent) {
			t.Errorf("Encode = %s, want no %q", body, absent)
		}
	}
	if !strings.Contains(string(body), `"hipaa_authorized":false`) {
		t.Errorf("Encode = %s, want hipaa_authorized false written", body)
	}
}

func TestNewEventAndEncodeRejectUnknownData(t *testing.T) {
	tests := []struct {
		name string
		data any
	}{
		{"nil", nil},
		{"pointer", &Consumer{}},
		{"other struct", Person{}},
		{"string", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewEvent("urn:x", 1, tt.data); !errors.Is(err, ErrUnknownData) {
				t.Errorf("NewEvent(%T) error = %v, want ErrUnknownData", tt.data, err)
			}
			if _, err := Encode(Event{ID: "x", Source: "urn:x", Type: TypeConsumerUpserted, EntityVersion: 1, Data: tt.data}); !errors.Is(err, ErrUnknownData) {
				t.Errorf("Encode(%T) error = %v, want ErrUnknownData", tt.data, err)
			}
		})
	}
	t.Run("type mismatch", func(t *testing.T) {
		_, err := Encode(Event{ID: "x", Source: "urn:x", Type: TypeConsumerDeleted, EntityVersion: 1, Data: Consumer{}})
		if !errors.Is(err, ErrUnknownData) {
			t.Errorf("Encode error = %v, want ErrUnknownData", err)
		}
	})
}

func TestValidUUID(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{testConsumerID, true},
		{strings.ToUpper(testConsumerID), true},
		{"00000000-0000-0000-0000-000000000000", true},
		{"", false},
		{"urn:uuid:" + testConsumerID, false},
		{"{" + testConsumerID + "}", false},
		{strings.ReplaceAll(testConsumerID, "-", ""), false},
		{testConsumerID[:35], false},
		{testConsumerID + "0", false},
		{"0b7e0f4e-3a1c-4c7e-9a52_7f3f2c1d9e01", false},
		{"0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e0z", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := ValidUUID(tt.in); got != tt.want {
				t.Errorf("ValidUUID(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeID(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"lower", testConsumerID, testConsumerID, true},
		{"upper", strings.ToUpper(testConsumerID), testConsumerID, true},
		{"mixed", "0B7E0F4E-3a1c-4C7E-9a52-7F3F2C1D9E01", "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01", true},
		{"empty", "", "", false},
		{"urn", "urn:uuid:" + testConsumerID, "", false},
		{"braces", "{" + testConsumerID + "}", "", false},
		{"no dashes", strings.ReplaceAll(testConsumerID, "-", ""), "", false},
		{"not hex", "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e0z", "", false},
		{"non-ASCII letter", "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e\u00e9", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := NormalizeID(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("NormalizeID(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestReasonsHoldNoPersonalData checks that no error of Decode quotes a
// social security number or a date of birth, valid or not, so that logging
// the error of a refused event leaks neither.
func TestReasonsHoldNoPersonalData(t *testing.T) {
	tests := []struct {
		field, value string
	}{
		{"data.social_security_number", "987-65-432"},
		{"data.social_security_number", "12345678X"},
		{"data.date_of_birth", "1970-02-30"},
		{"data.date_of_birth", "2999-02-29"},
		{"data.date_of_birth", "31/01/1970"},
	}
	for _, tt := range tests {
		t.Run(tt.field+"="+tt.value, func(t *testing.T) {
			env := sampleEnvelope(TypeSignerUpserted)
			setPath(env, tt.field, tt.value)
			_, err := Decode(sampleSubject(TypeSignerUpserted), mustJSON(t, env))
			if err == nil {
				t.Fatal("Decode accepted the event, want an error")
			}
			if strings.Contains(err.Error(), tt.value) {
				t.Errorf("error %q quotes the value", err)
			}
		})
	}
	// A valid SSN and date of birth are not quoted by a fault elsewhere.
	env := sampleEnvelope(TypeSignerUpserted)
	setPath(env, "data.status", "GONE")
	_, err := Decode(sampleSubject(TypeSignerUpserted), mustJSON(t, env))
	if err == nil || strings.Contains(err.Error(), "6789") || strings.Contains(err.Error(), "1970") {
		t.Errorf("error %v, want one that quotes neither SSN nor date of birth", err)
	}
}

// TestDecodeFaultOrder checks the order in which Decode reports several
// faults of one body, as its doc comment states it.
func TestDecodeFaultOrder(t *testing.T) {
	tests := []struct {
		name      string
		set       map[string]any
		subject   string
		wantField string
	}{
		{"wrong type before missing attribute", map[string]any{"id": del, "time": raw("1")}, "", "time"},
		{"first wrong type in body order", map[string]any{"source": raw("1"), "type": raw("2")}, "", "source"},
		{"missing attributes in rule order", map[string]any{"entityversion": del, "specversion": del}, "", "specversion"},
		{"envelope before data", map[string]any{"entityversion": del, "data.first_name": raw("1")}, "", "entityversion"},
		{"data wrong type before data missing", map[string]any{"data.consumer_id": del, "data.last_name": raw("1")}, "", "data.last_name"},
		{"data before subject", map[string]any{"data.first_name": ""}, SubjectPrefixConsumer + otherID, "data.first_name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := sampleEnvelope(TypeConsumerUpserted)
			for p, v := range tt.set {
				setPath(env, p, v)
			}
			subject := sampleSubject(TypeConsumerUpserted)
			if tt.subject != "" {
				subject = tt.subject
			}
			_, err := Decode(subject, mustJSON(t, env))
			var ie *InvalidEventError
			if !errors.As(err, &ie) || ie.Field != tt.wantField {
				t.Errorf("Decode error = %v, want one for %q", err, tt.wantField)
			}
		})
	}
}
