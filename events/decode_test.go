package events

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// raw is a literal JSON value for setPath.
func raw(s string) json.RawMessage { return json.RawMessage(s) }

var del = deleteField{}

func TestDecodeInvalid(t *testing.T) {
	signerSubject := sampleSubject(TypeSignerUpserted)
	tests := []struct {
		name      string
		typ       Type           // sample to start from
		set       map[string]any // paths to change in the sample
		body      string         // raw body instead of the sample, when not ""
		subject   string         // subject instead of the sample's, when not ""
		wantField string
	}{
		// The body.
		{name: "body not JSON", body: `{"specversion":`, wantField: ""},
		{name: "body empty", body: ` `, wantField: ""},
		{name: "body array", body: `[1,2]`, wantField: ""},
		{name: "body string", body: `"event"`, wantField: ""},
		{name: "body trailing garbage", body: `{"specversion":"1.0"} x`, wantField: ""},

		// specversion.
		{name: "specversion missing", set: map[string]any{"specversion": del}, wantField: "specversion"},
		{name: "specversion null", set: map[string]any{"specversion": nil}, wantField: "specversion"},
		{name: "specversion empty", set: map[string]any{"specversion": ""}, wantField: "specversion"},
		{name: "specversion 0.3", set: map[string]any{"specversion": "0.3"}, wantField: "specversion"},
		{name: "specversion number", set: map[string]any{"specversion": raw("1.0")}, wantField: "specversion"},

		// id.
		{name: "id missing", set: map[string]any{"id": del}, wantField: "id"},
		{name: "id empty", set: map[string]any{"id": ""}, wantField: "id"},
		{name: "id null", set: map[string]any{"id": nil}, wantField: "id"},
		{name: "id number", set: map[string]any{"id": raw("42")}, wantField: "id"},

		// source.
		{name: "source missing", set: map[string]any{"source": del}, wantField: "source"},
		{name: "source empty", set: map[string]any{"source": ""}, wantField: "source"},
		{name: "source bad escape", set: map[string]any{"source": "crm%zz"}, wantField: "source"},
		{name: "source bad host", set: map[string]any{"source": "http://[::1/x"}, wantField: "source"},
		{name: "source bad port", set: map[string]any{"source": "http://crm:port/x"}, wantField: "source"},
		{name: "source object", set: map[string]any{"source": map[string]any{}}, wantField: "source"},

		// type.
		{name: "type missing", set: map[string]any{"type": del}, wantField: "type"},
		{name: "type unknown", set: map[string]any{"type": "persons.consumer.created.v1"}, wantField: "type"},
		{name: "type v2", set: map[string]any{"type": "persons.consumer.upserted.v2"}, wantField: "type"},
		{name: "type wrong case", set: map[string]any{"type": "Persons.Consumer.Upserted.v1"}, wantField: "type"},
		{name: "type number", set: map[string]any{"type": raw("1")}, wantField: "type"},

		// time.
		{name: "time empty", set: map[string]any{"time": ""}, wantField: "time"},
		{name: "time not RFC 3339", set: map[string]any{"time": "2026-11-22 10:00:00"}, wantField: "time"},
		{name: "time without zone", set: map[string]any{"time": "2026-11-22T10:00:00"}, wantField: "time"},
		{name: "time number", set: map[string]any{"time": raw("1763805600")}, wantField: "time"},

		// datacontenttype.
		{name: "datacontenttype empty", set: map[string]any{"datacontenttype": ""}, wantField: "datacontenttype"},
		{name: "datacontenttype text", set: map[string]any{"datacontenttype": "text/plain"}, wantField: "datacontenttype"},
		{name: "datacontenttype json suffix", set: map[string]any{"datacontenttype": "application/jsonx"}, wantField: "datacontenttype"},
		{name: "datacontenttype cloudevents", set: map[string]any{"datacontenttype": "application/cloudevents+json"}, wantField: "datacontenttype"},
		{name: "datacontenttype number", set: map[string]any{"datacontenttype": raw("1")}, wantField: "datacontenttype"},

		// entityversion.
		{name: "entityversion missing", set: map[string]any{"entityversion": del}, wantField: "entityversion"},
		{name: "entityversion null", set: map[string]any{"entityversion": nil}, wantField: "entityversion"},
		{name: "entityversion zero", set: map[string]any{"entityversion": raw("0")}, wantField: "entityversion"},
		{name: "entityversion zero float", set: map[string]any{"entityversion": raw("0.0")}, wantField: "entityversion"},
		{name: "entityversion negative", set: map[string]any{"entityversion": raw("-1")}, wantField: "entityversion"},
		{name: "entityversion fraction", set: map[string]any{"entityversion": raw("1.5")}, wantField: "entityversion"},
		{name: "entityversion small exponent", set: map[string]any{"entityversion": raw("1e-3")}, wantField: "entityversion"},
		{name: "entityversion string", set: map[string]any{"entityversion": "1"}, wantField: "entityversion"},
		{name: "entityversion bool", set: map[string]any{"entityversion": true}, wantField: "entityversion"},
		{name: "entityversion too big", set: map[string]any{"entityversion": raw("18446744073709551616")}, wantField: "entityversion"},
		{name: "entityversion too big exponent", set: map[string]any{"entityversion": raw("1e20")}, wantField: "entityversion"},

		// data.
		{name: "data missing", set: map[string]any{"data": del}, wantField: "data"},
		{name: "data null", set: map[string]any{"data": nil}, wantField: "data"},
		{name: "data array", set: map[string]any{"data": []any{}}, wantField: "data"},
		{name: "data string", set: map[string]any{"data": `{"consumer_id":"x"}`}, wantField: "data"},
		{name: "data empty object", set: map[string]any{"data": map[string]any{}}, wantField: "data.consumer_id"},

		// Ids.
		{name: "consumer_id missing", set: map[string]any{"data.consumer_id": del}, wantField: "data.consumer_id"},
		{name: "consumer_id null", set: map[string]any{"data.consumer_id": nil}, wantField: "data.consumer_id"},
		{name: "consumer_id empty", set: map[string]any{"data.consumer_id": ""}, wantField: "data.consumer_id"},
		{name: "consumer_id number", set: map[string]any{"data.consumer_id": raw("7")}, wantField: "data.consumer_id"},
		{name: "consumer_id not uuid", set: map[string]any{"data.consumer_id": "consumer-1"}, wantField: "data.consumer_id"},
		{name: "consumer_id urn", set: map[string]any{"data.consumer_id": "urn:uuid:" + testConsumerID}, wantField: "data.consumer_id"},
		{name: "consumer_id braces", set: map[string]any{"data.consumer_id": "{" + testConsumerID + "}"}, wantField: "data.consumer_id"},
		{name: "consumer_id no dashes", set: map[string]any{"data.consumer_id": strings.ReplaceAll(testConsumerID, "-", "")}, wantField: "data.consumer_id"},
		{name: "consumer_id non-hex", set: map[string]any{"data.consumer_id": "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e0g"}, wantField: "data.consumer_id"},
		{name: "consumer_id dash misplaced", set: map[string]any{"data.consumer_id": "0b7e0f4e3-a1c-4c7e-9a52-7f3f2c1d9e01"}, wantField: "data.consumer_id"},
		{name: "business_id missing", set: map[string]any{"data.business_id": del}, wantField: "data.business_id"},
		{name: "business_id not uuid", set: map[string]any{"data.business_id": "acme"}, wantField: "data.business_id"},
		{name: "consumer deleted id missing", typ: TypeConsumerDeleted, set: map[string]any{"data.consumer_id": del}, wantField: "data.consumer_id"},
		{name: "contact_id missing", typ: TypeBusinessContactUpserted, set: map[string]any{"data.contact_id": del}, wantField: "data.contact_id"},
		{name: "contact_id not uuid", typ: TypeBusinessContactUpserted, set: map[string]any{"data.contact_id": "c-1"}, wantField: "data.contact_id"},
		{name: "contact business_id bad", typ: TypeBusinessContactUpserted, set: map[string]any{"data.business_id": "b"}, wantField: "data.business_id"},
		{name: "contact deleted id bad", typ: TypeBusinessContactDeleted, set: map[string]any{"data.contact_id": "c-1"}, wantField: "data.contact_id"},
		{name: "signer_id missing", typ: TypeSignerUpserted, set: map[string]any{"data.signer_id": del}, wantField: "data.signer_id"},
		{name: "signer consumer_id bad", typ: TypeSignerUpserted, set: map[string]any{"data.consumer_id": "x"}, wantField: "data.consumer_id"},
		{name: "signer deleted signer_id bad", typ: TypeSignerDeleted, set: map[string]any{"data.signer_id": "x"}, wantField: "data.signer_id"},
		{name: "signer deleted consumer_id missing", typ: TypeSignerDeleted, set: map[string]any{"data.consumer_id": del}, wantField: "data.consumer_id"},

		// Names.
		{name: "first_name missing", set: map[string]any{"data.first_name": del}, wantField: "data.first_name"},
		{name: "first_name null", set: map[string]any{"data.first_name": nil}, wantField: "data.first_name"},
		{name: "first_name empty", set: map[string]any{"data.first_name": ""}, wantField: "data.first_name"},
		{name: "first_name number", set: map[string]any{"data.first_name": raw("1")}, wantField: "data.first_name"},
		{name: "last_name missing", set: map[string]any{"data.last_name": del}, wantField: "data.last_name"},
		{name: "middle_name number", set: map[string]any{"data.middle_name": raw("1")}, wantField: "data.middle_name"},
		{name: "contact last_name empty", typ: TypeBusinessContactUpserted, set: map[string]any{"data.last_name": ""}, wantField: "data.last_name"},
		{name: "signer first_name missing", typ: TypeSignerUpserted, set: map[string]any{"data.first_name": del}, wantField: "data.first_name"},
		{name: "signer last_name array", typ: TypeSignerUpserted, set: map[string]any{"data.last_name": []any{"T"}}, wantField: "data.last_name"},

		// Signer flags and enums.
		{name: "hipaa missing", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": del}, wantField: "data.hipaa_authorized"},
		{name: "hipaa null", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": nil}, wantField: "data.hipaa_authorized"},
		{name: "hipaa string", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": "yes"}, wantField: "data.hipaa_authorized"},
		{name: "hipaa number", typ: TypeSignerUpserted, set: map[string]any{"data.hipaa_authorized": raw("1")}, wantField: "data.hipaa_authorized"},
		{name: "account_access missing", typ: TypeSignerUpserted, set: map[string]any{"data.account_access": del}, wantField: "data.account_access"},
		{name: "account_access unknown", typ: TypeSignerUpserted, set: map[string]any{"data.account_access": "ALL"}, wantField: "data.account_access"},
		{name: "account_access lower case", typ: TypeSignerUpserted, set: map[string]any{"data.account_access": "phi"}, wantField: "data.account_access"},
		{name: "status missing", typ: TypeSignerUpserted, set: map[string]any{"data.status": nil}, wantField: "data.status"},
		{name: "status unknown", typ: TypeSignerUpserted, set: map[string]any{"data.status": "DELETED"}, wantField: "data.status"},
		{name: "status number", typ: TypeSignerUpserted, set: map[string]any{"data.status": raw("1")}, wantField: "data.status"},
		{name: "type missing", typ: TypeSignerUpserted, set: map[string]any{"data.type": ""}, wantField: "data.type"},
		{name: "type unknown", typ: TypeSignerUpserted, set: map[string]any{"data.type": "FRIEND"}, wantField: "data.type"},

		// Address and phone.
		{name: "address string", typ: TypeSignerUpserted, set: map[string]any{"data.address": "1 Main St"}, wantField: "data.address"},
		{name: "address line1 missing", typ: TypeSignerUpserted, set: map[string]any{"data.address.line1": del}, wantField: "data.address.line1"},
		{name: "address city empty", typ: TypeSignerUpserted, set: map[string]any{"data.address.city": ""}, wantField: "data.address.city"},
		{name: "address state null", typ: TypeSignerUpserted, set: map[string]any{"data.address.state": nil}, wantField: "data.address.state"},
		{name: "address zip_code number", typ: TypeSignerUpserted, set: map[string]any{"data.address.zip_code": raw("62701")}, wantField: "data.address.zip_code"},
		{name: "address country missing", typ: TypeSignerUpserted, set: map[string]any{"data.address.country": del}, wantField: "data.address.country"},
		{name: "address line2 number", typ: TypeSignerUpserted, set: map[string]any{"data.address.line2": raw("2")}, wantField: "data.address.line2"},
		{name: "phone array", typ: TypeSignerUpserted, set: map[string]any{"data.phone": []any{}}, wantField: "data.phone"},
		{name: "phone country_code missing", typ: TypeSignerUpserted, set: map[string]any{"data.phone.country_code": del}, wantField: "data.phone.country_code"},
		{name: "phone area_code empty", typ: TypeSignerUpserted, set: map[string]any{"data.phone.area_code": ""}, wantField: "data.phone.area_code"},
		{name: "phone number missing", typ: TypeSignerUpserted, set: map[string]any{"data.phone.number": del}, wantField: "data.phone.number"},
		{name: "phone number number", typ: TypeSignerUpserted, set: map[string]any{"data.phone.number": raw("5550100")}, wantField: "data.phone.number"},

		// SSN.
		{name: "ssn 8 digits", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "12345678"}, wantField: "data.social_security_number"},
		{name: "ssn 10 digits", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "1234567890"}, wantField: "data.social_security_number"},
		{name: "ssn dashes misplaced", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "123-456-789"}, wantField: "data.social_security_number"},
		{name: "ssn spaces", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "123 45 6789"}, wantField: "data.social_security_number"},
		{name: "ssn letters", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "12345678X"}, wantField: "data.social_security_number"},
		{name: "ssn one dash", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": "123-456789"}, wantField: "data.social_security_number"},
		{name: "ssn number", typ: TypeSignerUpserted, set: map[string]any{"data.social_security_number": raw("123456789")}, wantField: "data.social_security_number"},

		// Date of birth.
		{name: "dob 29 Feb non-leap", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "2023-02-29"}, wantField: "data.date_of_birth"},
		{name: "dob 29 Feb 1900", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1900-02-29"}, wantField: "data.date_of_birth"},
		{name: "dob 31 April", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-04-31"}, wantField: "data.date_of_birth"},
		{name: "dob month 13", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-13-01"}, wantField: "data.date_of_birth"},
		{name: "dob month 0", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-00-10"}, wantField: "data.date_of_birth"},
		{name: "dob day 0", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-01-00"}, wantField: "data.date_of_birth"},
		{name: "dob short month", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1990-1-01"}, wantField: "data.date_of_birth"},
		{name: "dob US order", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "01/31/1970"}, wantField: "data.date_of_birth"},
		{name: "dob with time", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "1970-01-31T00:00:00Z"}, wantField: "data.date_of_birth"},
		{name: "dob future", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": "2999-01-01"}, wantField: "data.date_of_birth"},
		{name: "dob number", typ: TypeSignerUpserted, set: map[string]any{"data.date_of_birth": raw("19700131")}, wantField: "data.date_of_birth"},

		// Subject.
		{name: "subject empty", subject: " ", wantField: "subject"},
		{name: "subject other consumer", subject: SubjectPrefixConsumer + otherID, wantField: "subject"},
		{name: "subject consumer event on contact subject", subject: SubjectPrefixBusinessContact + testConsumerID, wantField: "subject"},
		{name: "subject consumer event on signer subject", subject: SubjectPrefixSigner + testConsumerID + "." + testSignerID, wantField: "subject"},
		{name: "subject extra token", subject: SubjectPrefixConsumer + testConsumerID + ".x", wantField: "subject"},
		{name: "subject signer ids swapped", typ: TypeSignerUpserted, subject: SubjectPrefixSigner + testSignerID + "." + testConsumerID, wantField: "subject"},
		{name: "subject signer other signer", typ: TypeSignerDeleted, subject: SubjectPrefixSigner + testConsumerID + "." + otherID, wantField: "subject"},
		{name: "subject signer on consumer subject", typ: TypeSignerUpserted, subject: SubjectPrefixConsumer + testConsumerID, wantField: "subject"},
		{name: "subject contact deleted other", typ: TypeBusinessContactDeleted, subject: SubjectPrefixBusinessContact + otherID, wantField: "subject"},
		{name: "subject data of other type", typ: TypeSignerUpserted, set: map[string]any{"type": string(TypeConsumerUpserted)}, subject: signerSubject, wantField: "data.business_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			typ := tt.typ
			if typ == "" {
				typ = TypeConsumerUpserted
			}
			body := []byte(tt.body)
			if tt.body == "" {
				env := sampleEnvelope(typ)
				for path, v := range tt.set {
					setPath(env, path, v)
				}
				body = mustJSON(t, env)
			}
			subject := sampleSubject(typ)
			if tt.subject != "" {
				subject = tt.subject
			}
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

func TestDecodeValid(t *testing.T) {
	upper := strings.ToUpper
	wantTime := time.Date(2026, 11, 22, 10, 0, 0, 500_000_000, time.UTC)
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
	tests := []struct {
		name        string
		typ         Type
		set         map[string]any
		subject     string // when not "", instead of the sample's
		wantData    any
		wantTime    *time.Time // when not nil, instead of wantTime
		wantVersion uint64     // when not 0, instead of 7
	}{
		{name: "consumer upserted", typ: TypeConsumerUpserted, wantData: consumer},
		{name: "consumer deleted", typ: TypeConsumerDeleted, wantData: ConsumerDeleted{ConsumerID: testConsumerID}},
		{name: "contact upserted", typ: TypeBusinessContactUpserted,
			wantData: BusinessContact{ContactID: testContactID, BusinessID: testBusinessID, FirstName: "Grace", MiddleName: "Brewster", LastName: "Hopper"}},
		{name: "contact deleted", typ: TypeBusinessContactDeleted, wantData: BusinessContactDeleted{ContactID: testContactID}},
		{name: "signer upserted with everything", typ: TypeSignerUpserted, wantData: fullSigner},
		{name: "signer deleted", typ: TypeSignerDeleted, wantData: SignerDeleted{SignerID: testSignerID, ConsumerID: testConsumerID}},

		{name: "upper-case ids are lower-cased", typ: TypeSignerUpserted,
			set:      map[string]any{"data.signer_id": upper(testSignerID), "data.consumer_id": upper(testConsumerID)},
			wantData: fullSigner},
		{name: "upper-case subject matches", typ: TypeSignerUpserted,
			subject:  SubjectPrefixSigner + upper(testConsumerID) + "." + upper(testSignerID),
			wantData: fullSigner},
		{name: "upper-case business_id lower-cased", typ: TypeConsumerUpserted,
			set: map[string]any{"data.business_id": upper(testBusinessID)}, wantData: consumer},
		{name: "ssn without dashes", typ: TypeSignerUpserted,
			set: map[string]any{"data.social_security_number": "123456789"}, wantData: fullSigner},
		{name: "optional fields absent", typ: TypeSignerUpserted,
			set: map[string]any{
				"data.middle_name": del, "data.address": del, "data.phone": del,
				"data.social_security_number": del, "data.date_of_birth": del,
				"data.hipaa_authorized": false, "data.account_access": "NONE", "data.status": "PENDING", "data.type": "GUARDIAN",
			},
			wantData: minimalSigner},
		{name: "optional fields null", typ: TypeSignerUpserted,
			set: map[string]any{
				"data.middle_name": nil, "data.address": nil, "data.phone": nil,
				"data.social_security_number": nil, "data.date_of_birth": nil,
				"data.hipaa_authorized": false, "data.account_access": "NONE", "data.status": "PENDING", "data.type": "GUARDIAN",
			},
			wantData: minimalSigner},
		{name: "optional fields empty", typ: TypeSignerUpserted,
			set: map[string]any{
				"data.middle_name": "", "data.social_security_number": "", "data.date_of_birth": "",
				"data.address": del, "data.phone": del,
				"data.hipaa_authorized": false, "data.account_access": "NONE", "data.status": "PENDING", "data.type": "GUARDIAN",
			},
			wantData: minimalSigner},
		{name: "address and phone without optional parts", typ: TypeSignerUpserted,
			set: map[string]any{"data.address.line2": del, "data.phone.extension": nil},
			wantData: func() Signer {
				s := fullSigner
				a, p := *s.Address, *s.Phone
				a.Line2, p.Extension = "", ""
				s.Address, s.Phone = &a, &p
				return s
			}()},
		{name: "dob 29 Feb leap year", typ: TypeSignerUpserted,
			set:      map[string]any{"data.date_of_birth": "2000-02-29"},
			wantData: func() Signer { s := fullSigner; s.DateOfBirth = "2000-02-29"; return s }()},
		{name: "unknown data fields ignored", typ: TypeConsumerUpserted,
			set: map[string]any{"data.nickname": "Ada", "data.tags": []any{1, 2}}, wantData: consumer},
		{name: "extension attributes ignored", typ: TypeConsumerUpserted,
			set: map[string]any{"traceparent": "00-abc-def-01", "partitionkey": raw("3")}, wantData: consumer},
		{name: "time absent", typ: TypeConsumerUpserted, set: map[string]any{"time": del}, wantData: consumer, wantTime: &time.Time{}},
		{name: "time null", typ: TypeConsumerUpserted, set: map[string]any{"time": nil}, wantData: consumer, wantTime: &time.Time{}},
		{name: "time with offset", typ: TypeConsumerUpserted, set: map[string]any{"time": "2026-11-22T11:00:00.5+01:00"},
			wantData: consumer},
		{name: "datacontenttype absent", typ: TypeConsumerUpserted, set: map[string]any{"datacontenttype": del}, wantData: consumer},
		{name: "datacontenttype null", typ: TypeConsumerUpserted, set: map[string]any{"datacontenttype": nil}, wantData: consumer},
		{name: "datacontenttype with charset", typ: TypeConsumerUpserted, set: map[string]any{"datacontenttype": "application/json; charset=utf-8"}, wantData: consumer},
		{name: "source URL", typ: TypeConsumerUpserted, set: map[string]any{"source": "https://crm.example.com:8443/events?x=1"}, wantData: consumer},
		{name: "source relative path", typ: TypeConsumerUpserted, set: map[string]any{"source": "/crm/eu-1"}, wantData: consumer},
		{name: "source with escape", typ: TypeConsumerUpserted, set: map[string]any{"source": "/crm/a%20b"}, wantData: consumer},
		{name: "id any string", typ: TypeConsumerUpserted, set: map[string]any{"id": "not a uuid, still an id"}, wantData: consumer},
		{name: "entityversion 1", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("1")}, wantData: consumer, wantVersion: 1},
		{name: "entityversion 1.0", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("1.0")}, wantData: consumer, wantVersion: 1},
		{name: "entityversion 1e3", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("1e3")}, wantData: consumer, wantVersion: 1000},
		{name: "entityversion max", typ: TypeConsumerUpserted, set: map[string]any{"entityversion": raw("18446744073709551615")},
			wantData: consumer, wantVersion: 18446744073709551615},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := sampleEnvelope(tt.typ)
			for path, v := range tt.set {
				setPath(env, path, v)
			}
			body := mustJSON(t, env)
			subject := sampleSubject(tt.typ)
			if tt.subject != "" {
				subject = tt.subject
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
			want := Event{ID: wantID, Source: wantSource, Type: tt.typ, EntityVersion: wantV, Data: tt.wantData}
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

func TestCheckDateOfBirthAgainstClock(t *testing.T) {
	// At 10:30 UTC on 2026-03-01 it is already 2026-03-02 in UTC+14.
	now := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
	tests := []struct {
		dob    string
		wantOK bool
	}{
		{"2026-03-01", true},
		{"2026-03-02", true},
		{"2026-03-03", false},
		{"2027-01-01", false},
		{"2026-04-01", false},
		{"0001-01-01", true},
	}
	for _, tt := range tests {
		t.Run(tt.dob, func(t *testing.T) {
			reason := checkDateOfBirth(tt.dob, now)
			if (reason == "") != tt.wantOK {
				t.Errorf("checkDateOfBirth(%q) = %q, want ok=%v", tt.dob, reason, tt.wantOK)
			}
		})
	}
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
