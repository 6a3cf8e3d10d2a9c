package events

import (
	"encoding/json"
	"strings"
	"testing"
)

// Ids used by the tests.
const (
	testConsumerID = "0b7e0f4e-3a1c-4c7e-9a52-7f3f2c1d9e01"
	testBusinessID = "5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
	testContactID  = "7f6e5d4c-3b2a-4190-8f7e-6d5c4b3a2910"
	testSignerID   = "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f"
	otherID        = "11111111-2222-4333-8444-555555555555"
)

// sampleData returns the data object of a valid event of type t with every
// field (optional ones included) set.
func sampleData(t Type) map[string]any {
	switch t {
	case TypeConsumerUpserted:
		return personSample("consumer_id", testConsumerID, "Ada", "King", "Lovelace")
	case TypeConsumerDeleted:
		return map[string]any{"consumer_id": testConsumerID}
	case TypeBusinessContactUpserted:
		return personSample("contact_id", testContactID, "Grace", "Brewster", "Hopper")
	case TypeBusinessContactDeleted:
		return map[string]any{"contact_id": testContactID}
	case TypeSignerUpserted:
		return map[string]any{
			"signer_id": testSignerID, "consumer_id": testConsumerID,
			"first_name": "Alan", "middle_name": "Mathison", "last_name": "Turing",
			"hipaa_authorized": true, "account_access": "PHI_AND_ACCOUNT_UPDATES",
			"status": "ACTIVE", "type": "POWER_OF_ATTORNEY",
			"address": map[string]any{
				"line1": "1 Main St", "line2": "Apt 2", "city": "Springfield",
				"state": "IL", "zip_code": "62701", "country": "US",
			},
			"phone": map[string]any{
				"country_code": "1", "area_code": "217", "number": "5550100", "extension": "42",
			},
			"social_security_number": "123-45-6789",
			"date_of_birth":          "1970-01-31",
		}
	case TypeSignerDeleted:
		return map[string]any{"signer_id": testSignerID, "consumer_id": testConsumerID}
	}
	panic("unknown type " + string(t))
}

// personSample is the data of a valid consumer or business contact of
// testBusinessID: its id (the field idField) and its names.
func personSample(idField, id, first, middle, last string) map[string]any {
	return map[string]any{
		idField: id, "business_id": testBusinessID,
		"first_name": first, "middle_name": middle, "last_name": last,
	}
}

// sampleSubject is the subject of the sample event of type t.
func sampleSubject(t Type) string {
	switch t {
	case TypeConsumerUpserted, TypeConsumerDeleted:
		return SubjectPrefixConsumer + testConsumerID
	case TypeBusinessContactUpserted, TypeBusinessContactDeleted:
		return SubjectPrefixBusinessContact + testContactID
	default:
		return SubjectPrefixSigner + testConsumerID + "." + testSignerID
	}
}

// sampleEnvelope returns a valid event of type t as a JSON-ready map.
func sampleEnvelope(t Type) map[string]any {
	return map[string]any{
		"specversion":     "1.0",
		"id":              "evt-0001",
		"source":          "urn:example:crm",
		"type":            string(t),
		"time":            "2026-11-22T10:00:00.5Z",
		"datacontenttype": "application/json",
		"entityversion":   json.Number("7"),
		"data":            sampleData(t),
	}
}

// deleteField is the value that, given to setPath, removes the field.
type deleteField struct{}

// setPath sets (or, for deleteField{}, removes) the value at a dotted path
// such as "data.address.city" in m.
func setPath(m map[string]any, path string, v any) {
	keys := strings.Split(path, ".")
	for _, k := range keys[:len(keys)-1] {
		m = m[k].(map[string]any)
	}
	last := keys[len(keys)-1]
	if _, ok := v.(deleteField); ok {
		delete(m, last)
		return
	}
	m[last] = v
}

// mustJSON marshals v or fails the test (panics when tb is nil).
func mustJSON(tb testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		if tb == nil {
			panic(err)
		}
		tb.Helper()
		tb.Fatalf("json.Marshal: %v", err)
	}
	return b
}
