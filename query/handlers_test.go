package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/lookup/persons/events"
)

// Ids with special behaviour in the fixture reader.
const (
	personBoom   = "eeeeeeee-0000-4000-8000-00000000000e" // reader error
	personPanic  = "ffffffff-0000-4000-8000-00000000000f" // reader panics
	consumerNone = "dddddddd-0000-4000-8000-00000000000d" // consumer without signers (empty, nil error)
	// consumerBNone is a consumer of business B without signers.
	consumerBNone = "bbbbbbbb-0000-4000-8000-00000000000d"
)

// fixtureSigners are the signers of consumerA, deliberately unsorted.
func fixtureSigners() []events.Signer {
	return []events.Signer{
		{SignerID: "00000000-0000-4000-8000-000000000002", ConsumerID: consumerA, FirstName: "Bob", LastName: "Brown",
			HIPAAAuthorized: false, AccountAccess: events.AccountAccessNone, Status: events.SignerStatusInactive, Type: events.SignerTypeParent},
		{SignerID: "00000000-0000-4000-8000-000000000005", ConsumerID: consumerA, FirstName: "Cy", LastName: "Carter",
			HIPAAAuthorized: true, AccountAccess: events.AccountAccessUnspecified, Status: events.SignerStatusArchived, Type: events.SignerTypeConservator,
			Address:     &events.Address{Line1: "5 Elm St", City: "Austin", State: "TX", ZipCode: "73301", Country: "US"},
			Phone:       &events.Phone{CountryCode: "+1", AreaCode: "512", Number: "5550100"},
			DateOfBirth: "1990-12-31"},
		{SignerID: "00000000-0000-4000-8000-000000000003", ConsumerID: consumerA, FirstName: "Amy", LastName: "Brown",
			AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusPending, Type: events.SignerTypeGuardian, SSN: "987654321"},
		{SignerID: "00000000-0000-4000-8000-000000000001", ConsumerID: consumerA, FirstName: "Zed", MiddleName: "Q", LastName: "Adams",
			HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHIAndAccountUpdates, Status: events.SignerStatusActive, Type: events.SignerTypePowerOfAttorney,
			Address: &events.Address{Line1: "1 Main St", Line2: "Apt 2", City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
			Phone:   &events.Phone{CountryCode: "+1", AreaCode: "217", Number: "5550199", Extension: "12"},
			SSN:     "123456789", DateOfBirth: "1980-01-02"},
		{SignerID: "00000000-0000-4000-8000-000000000000", ConsumerID: consumerA, FirstName: "Amy", LastName: "Brown",
			AccountAccess: events.AccountAccessNone, Status: events.SignerStatusActive, Type: events.SignerTypeAuthorizedSigner, SSN: "111223333"},
	}
}

// fixtureReader serves consumerA (business A, five signers), contactA (a
// business contact of business A), consumerB (business B, one signer),
// and the special ids above.
func fixtureReader() *fakeReader {
	return &fakeReader{
		PersonFunc: func(_ context.Context, id string) (events.Person, error) {
			switch id {
			case consumerA:
				return events.Person{ID: consumerA, BusinessID: businessA, FirstName: "Ann", LastName: "Lee", Type: events.PersonTypeConsumer}, nil
			case contactA:
				return events.Person{ID: contactA, BusinessID: businessA, FirstName: "Carl", MiddleName: "J", LastName: "Ito", Type: events.PersonTypeBusinessContact}, nil
			case consumerB:
				return events.Person{ID: consumerB, BusinessID: businessB, FirstName: "Ben", LastName: "Ode", Type: events.PersonTypeConsumer}, nil
			case personBoom:
				return events.Person{}, errors.New("badger: disk on fire at /var/lib/secret")
			case personPanic:
				panic("reader exploded")
			}
			return events.Person{}, events.ErrNotFound
		},
		SignersFunc: func(_ context.Context, id string) (events.Person, []events.Signer, error) {
			switch id {
			case consumerA:
				return events.Person{ID: consumerA, BusinessID: businessA, FirstName: "Ann", LastName: "Lee", Type: events.PersonTypeConsumer}, fixtureSigners(), nil
			case consumerB:
				return events.Person{ID: consumerB, BusinessID: businessB, FirstName: "Ben", LastName: "Ode", Type: events.PersonTypeConsumer},
					[]events.Signer{{SignerID: "00000000-0000-4000-8000-0000000000b1", ConsumerID: consumerB, FirstName: "Bo", LastName: "Bee",
						AccountAccess: events.AccountAccessNone, Status: events.SignerStatusActive, Type: events.SignerTypeParent}}, nil
			case consumerNone:
				return events.Person{ID: consumerNone, BusinessID: businessA, Type: events.PersonTypeConsumer}, nil, nil
			case consumerBNone:
				return events.Person{ID: consumerBNone, BusinessID: businessB, Type: events.PersonTypeConsumer}, []events.Signer{}, nil
			case personBoom:
				return events.Person{}, nil, errors.New("badger: disk on fire")
			case personPanic:
				panic("reader exploded")
			}
			return events.Person{}, nil, events.ErrNotFound
		},
	}
}

// baseItems are consumerA's signers as the API shows them, in order, with
// no protected data.
func baseItems() []map[string]any {
	return []map[string]any{
		{"first_name": "Zed", "middle_name": "Q", "last_name": "Adams", "hipaa_authorized": true,
			"account_access": "PHI_AND_ACCOUNT_UPDATES", "status": "ACTIVE", "type": "POWER_OF_ATTORNEY",
			"address": map[string]any{"line1": "1 Main St", "line2": "Apt 2", "city": "Springfield", "state": "IL", "zip_code": "62701", "country": "US"},
			"phone":   map[string]any{"country_code": "+1", "area_code": "217", "number": "5550199", "extension": "12"}},
		{"first_name": "Amy", "last_name": "Brown", "hipaa_authorized": false,
			"account_access": "NONE", "status": "ACTIVE", "type": "AUTHORIZED_SIGNER"},
		{"first_name": "Amy", "last_name": "Brown", "hipaa_authorized": false,
			"account_access": "PHI", "status": "PENDING", "type": "GUARDIAN"},
		{"first_name": "Bob", "last_name": "Brown", "hipaa_authorized": false,
			"account_access": "NONE", "status": "INACTIVE", "type": "PARENT"},
		{"first_name": "Cy", "last_name": "Carter", "hipaa_authorized": true,
			"account_access": "UNSPECIFIED", "status": "ARCHIVED", "type": "CONSERVATOR",
			"address": map[string]any{"line1": "5 Elm St", "city": "Austin", "state": "TX", "zip_code": "73301", "country": "US"},
			"phone":   map[string]any{"country_code": "+1", "area_code": "512", "number": "5550100"}},
	}
}

// itemsWithPPD returns baseItems with protected data; ssns are the five
// SSN renderings in item order ("" = absent).
func itemsWithPPD(ssns [5]string) []map[string]any {
	dobs := [5]string{"1980-01-02", "", "", "", "1990-12-31"}
	items := baseItems()
	for i := range items {
		ppd := map[string]any{}
		if ssns[i] != "" {
			ppd["social_security_number"] = ssns[i]
		}
		if dobs[i] != "" {
			ppd["date_of_birth"] = dobs[i]
		}
		items[i]["protected_personal_data"] = ppd
	}
	return items
}

// asJSONValue round-trips v through JSON so it compares with a decoded body.
func asJSONValue(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// compareBody compares a JSON body with want field by field.
func compareBody(t *testing.T, body []byte, want any) {
	t.Helper()
	var got any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("decode body %q: %v", body, err)
	}
	compareValue(t, "$", got, asJSONValue(t, want))
}

func compareValue(t *testing.T, path string, got, want any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			t.Errorf("%s: got %v, want object %v", path, got, want)
			return
		}
		for k, wv := range w {
			gv, ok := g[k]
			if !ok {
				t.Errorf("%s.%s: missing, want %v", path, k, wv)
				continue
			}
			compareValue(t, path+"."+k, gv, wv)
		}
		for k, gv := range g {
			if _, ok := w[k]; !ok {
				t.Errorf("%s.%s: got %v, want field absent", path, k, gv)
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			t.Errorf("%s: got %v, want %v", path, got, want)
			return
		}
		for i := range w {
			compareValue(t, path+"["+itoa(i)+"]", g[i], w[i])
		}
	default:
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", path, got, want)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// wantProblem is the expected problem of an error answer.
type wantProblem struct {
	kind   problemKind
	params []invalidParam
}

// checkProblem verifies a problem answer field by field.
func checkProblem(t *testing.T, rec interface {
	Result() *http.Response
}, req *http.Request, body []byte, want wantProblem) {
	t.Helper()
	pk := problemKinds[want.kind]
	resp := rec.Result()
	defer resp.Body.Close()
	if resp.StatusCode != pk.Status {
		t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, pk.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	if req.Method == http.MethodHead {
		if len(body) != 0 {
			t.Errorf("HEAD answer has a body: %q", body)
		}
		return
	}
	var p problemBody
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode problem %q: %v", body, err)
	}
	if p.Type != want.kind.TypeURI() {
		t.Errorf("type = %q, want %q", p.Type, want.kind.TypeURI())
	}
	if p.Title != pk.Title {
		t.Errorf("title = %q, want %q", p.Title, pk.Title)
	}
	if p.Status != pk.Status {
		t.Errorf("status member = %d, want %d", p.Status, pk.Status)
	}
	if p.Detail == "" {
		t.Errorf("detail is empty")
	}
	if p.Instance != req.URL.EscapedPath() {
		t.Errorf("instance = %q, want %q", p.Instance, req.URL.EscapedPath())
	}
	if !reflect.DeepEqual(p.InvalidParams, want.params) {
		t.Errorf("invalid_params = %+v, want %+v", p.InvalidParams, want.params)
	}
}

func TestGetAuthorizedSigners(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	read := rsaToken(t, goodClaims("read:persons"))
	readSSN := rsaToken(t, goodClaims("read:persons read:persons:ssn"))
	path := "/api/v1/authorized-signers"
	last4 := [5]string{"6789", "3333", "4321", "", ""}
	masked := [5]string{"***-**-6789", "***-**-3333", "***-**-4321", "", ""}
	full := [5]string{"123-45-6789", "111-22-3333", "987-65-4321", "", ""}
	none := [5]string{}

	tests := []struct {
		name    string
		query   string
		token   string
		want    any // body of a 200
		problem *wantProblem
	}{
		{name: "only consumer_id", query: "consumer_id=" + consumerA, token: read, want: map[string]any{"items": baseItems()}},
		{name: "upper-case consumer_id", query: "consumer_id=" + strings.ToUpper(consumerA), token: read, want: map[string]any{"items": baseItems()}},
		{name: "expand defaults to LAST4", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA", token: read, want: map[string]any{"items": itemsWithPPD(last4)}},
		{name: "expand LAST4", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4", token: read, want: map[string]any{"items": itemsWithPPD(last4)}},
		{name: "expand MASKED", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=MASKED", token: read, want: map[string]any{"items": itemsWithPPD(masked)}},
		{name: "expand FULL with ssn scope", query: "ssn_mode=FULL&expand=PROTECTED_PERSONAL_DATA&consumer_id=" + consumerA, token: readSSN, want: map[string]any{"items": itemsWithPPD(full)}},
		{name: "expand NONE", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=NONE", token: read, want: map[string]any{"items": itemsWithPPD(none)}},
		{name: "FULL without ssn scope", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", token: read,
			problem: &wantProblem{kind: probInsufficientScope}},
		{name: "missing consumer_id", query: "", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "consumer_id", Reason: reasonRequired}}}},
		{name: "empty consumer_id", query: "consumer_id=", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "consumer_id", Reason: reasonUUID}}}},
		{name: "non-canonical consumer_id", query: "consumer_id=" + strings.ReplaceAll(consumerA, "-", ""), token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "consumer_id", Reason: reasonUUID}}}},
		{name: "braced consumer_id", query: "consumer_id={" + consumerA + "}", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "consumer_id", Reason: reasonUUID}}}},
		{name: "repeated consumer_id", query: "consumer_id=" + consumerA + "&consumer_id=" + consumerA, token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "consumer_id", Reason: reasonRepeated}}}},
		{name: "unknown parameter", query: "consumer_id=" + consumerA + "&page=2", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "page", Reason: reasonUnknown}}}},
		{name: "parameter names are case-sensitive", query: "Consumer_ID=" + consumerA, token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "Consumer_ID", Reason: reasonUnknown}, {Name: "consumer_id", Reason: reasonRequired}}}},
		{name: "bad expand", query: "consumer_id=" + consumerA + "&expand=ALL", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "expand", Reason: reasonExpand}}}},
		{name: "lower-case expand value", query: "consumer_id=" + consumerA + "&expand=protected_personal_data", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "expand", Reason: reasonExpand}}}},
		{name: "repeated expand", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&expand=PROTECTED_PERSONAL_DATA", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "expand", Reason: reasonRepeated}}}},
		{name: "bad ssn_mode", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST5", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "ssn_mode", Reason: reasonSSNMode}}}},
		{name: "ssn_mode without expand", query: "consumer_id=" + consumerA + "&ssn_mode=LAST4", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "ssn_mode", Reason: reasonNeedsExp}}}},
		// The FULL scope is decided from the raw query, before parameters.
		{name: "FULL without expand is 403 before parameters", query: "consumer_id=" + consumerA + "&ssn_mode=FULL", token: read,
			problem: &wantProblem{kind: probInsufficientScope}},
		{name: "FULL with a bad consumer_id is 403", query: "consumer_id=nope&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", token: read,
			problem: &wantProblem{kind: probInsufficientScope}},
		{name: "FULL among repeated ssn_mode is 403", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4&ssn_mode=FULL", token: read,
			problem: &wantProblem{kind: probInsufficientScope}},
		{name: "percent-encoded FULL is 403", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn%5Fmode=%46ULL", token: read,
			problem: &wantProblem{kind: probInsufficientScope}},
		{name: "FULL in a malformed query is 403", query: "consumer_id=%zz&ssn_mode=FULL", token: read,
			problem: &wantProblem{kind: probInsufficientScope}},
		{name: "lower-case full is a parameter problem", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=full", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "ssn_mode", Reason: reasonSSNMode}}}},
		{name: "FULL without expand, with the ssn scope, is 400", query: "consumer_id=" + consumerA + "&ssn_mode=FULL", token: readSSN,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "ssn_mode", Reason: reasonNeedsExp}}}},
		{name: "FULL among repeated ssn_mode, with the ssn scope, is 400", query: "consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=LAST4&ssn_mode=FULL", token: readSSN,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "ssn_mode", Reason: reasonRepeated}}}},
		{name: "every problem listed", query: "consumer_id=nope&expand=X&ssn_mode=Y&zzz=1", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{
				{Name: "consumer_id", Reason: reasonUUID}, {Name: "expand", Reason: reasonExpand}, {Name: "ssn_mode", Reason: reasonSSNMode}, {Name: "zzz", Reason: reasonUnknown}}}},
		{name: "malformed query string", query: "consumer_id=%zz", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "query", Reason: reasonQuery}}}},
		{name: "parameters are checked after auth", query: "consumer_id=nope",
			problem: &wantProblem{kind: probUnauthorized}},
		{name: "parameters are checked after scope", query: "consumer_id=nope", token: rsaToken(t, goodClaims("read:other")),
			problem: &wantProblem{kind: probInsufficientScope}},
		{name: "unknown consumer", query: "consumer_id=" + consumerNo, token: read, problem: &wantProblem{kind: probNotFound}},
		{name: "consumer without signers", query: "consumer_id=" + consumerNone, token: read, problem: &wantProblem{kind: probNotFound}},
		{name: "consumer with an empty signer list", query: "consumer_id=" + consumerBNone, token: read, problem: &wantProblem{kind: probNotFound}},
		{name: "reader failure", query: "consumer_id=" + personBoom, token: read, problem: &wantProblem{kind: probInternal}},
		{name: "reader panic", query: "consumer_id=" + personPanic, token: read, problem: &wantProblem{kind: probInternal}},
	}
	for _, tc := range tests {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				target := path
				if tc.query != "" {
					target += "?" + tc.query
				}
				req := newRequest(method, target, tc.token)
				req.Header.Set("Accept", "application/json")
				rec := serve(t, s, req)
				checkOperation(t, rec, req, tc.problem, tc.want)
			})
		}
	}
}

func TestGetPerson(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	read := rsaToken(t, goodClaims("read:persons"))
	tests := []struct {
		name    string
		target  string
		token   string
		want    map[string]any
		problem *wantProblem
	}{
		{name: "consumer", target: "/api/v1/persons/" + consumerA, token: read,
			want: map[string]any{"person_id": consumerA, "business_id": businessA, "first_name": "Ann", "last_name": "Lee", "type": "CONSUMER"}},
		{name: "business contact with middle name", target: "/api/v1/persons/" + contactA, token: read,
			want: map[string]any{"person_id": contactA, "business_id": businessA, "first_name": "Carl", "middle_name": "J", "last_name": "Ito", "type": "BUSINESS_CONTACT"}},
		{name: "upper-case id", target: "/api/v1/persons/" + strings.ToUpper(consumerA), token: read,
			want: map[string]any{"person_id": consumerA, "business_id": businessA, "first_name": "Ann", "last_name": "Lee", "type": "CONSUMER"}},
		{name: "percent-encoded dashes", target: "/api/v1/persons/" + strings.ReplaceAll(consumerA, "-", "%2D"), token: read,
			want: map[string]any{"person_id": consumerA, "business_id": businessA, "first_name": "Ann", "last_name": "Lee", "type": "CONSUMER"}},
		{name: "percent-encoded lower-case escapes", target: "/api/v1/persons/%61aaaaaaa%2d0000-4000-8000-000000000001", token: read,
			want: map[string]any{"person_id": consumerA, "business_id": businessA, "first_name": "Ann", "last_name": "Lee", "type": "CONSUMER"}},
		{name: "double percent-encoding is not decoded twice", target: "/api/v1/persons/" + strings.ReplaceAll(consumerA, "-", "%252D"), token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "person_id", Reason: reasonUUID}}}},
		{name: "encoded slash", target: "/api/v1/persons/aaaaaaaa%2F0000", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "person_id", Reason: reasonUUID}}}},
		{name: "not a uuid", target: "/api/v1/persons/42", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "person_id", Reason: reasonUUID}}}},
		{name: "uuid without dashes", target: "/api/v1/persons/" + strings.ReplaceAll(consumerA, "-", ""), token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "person_id", Reason: reasonUUID}}}},
		{name: "any query parameter", target: "/api/v1/persons/" + consumerA + "?expand=PROTECTED_PERSONAL_DATA", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "expand", Reason: reasonUnknown}}}},
		{name: "bad id and query parameter", target: "/api/v1/persons/x?a=1&a=2", token: read,
			problem: &wantProblem{kind: probInvalidParams, params: []invalidParam{{Name: "a", Reason: reasonUnknown}, {Name: "person_id", Reason: reasonUUID}}}},
		{name: "bad id after auth", target: "/api/v1/persons/x", problem: &wantProblem{kind: probUnauthorized}},
		{name: "unknown person", target: "/api/v1/persons/" + consumerNo, token: read, problem: &wantProblem{kind: probNotFound}},
		{name: "reader failure", target: "/api/v1/persons/" + personBoom, token: read, problem: &wantProblem{kind: probInternal}},
		{name: "reader panic", target: "/api/v1/persons/" + personPanic, token: read, problem: &wantProblem{kind: probInternal}},
		{name: "trailing slash", target: "/api/v1/persons/" + consumerA + "/", token: read, problem: &wantProblem{kind: probRouteNotFound}},
		{name: "no id", target: "/api/v1/persons/", token: read, problem: &wantProblem{kind: probRouteNotFound}},
	}
	for _, tc := range tests {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			t.Run(tc.name+"/"+method, func(t *testing.T) {
				req := newRequest(method, tc.target, tc.token)
				rec := serve(t, s, req)
				checkOperation(t, rec, req, tc.problem, tc.want)
			})
		}
	}
}

// checkCommonHeaders checks the headers every answer carries.
// checkOperation checks one answer of an operation: the headers every answer
// carries, then the problem when one is expected, else a 200 JSON answer
// whose body equals want (and no body for HEAD).
func checkOperation(t *testing.T, rec *httptest.ResponseRecorder, req *http.Request, problem *wantProblem, want any) {
	t.Helper()
	checkCommonHeaders(t, rec.Result())
	if problem != nil {
		checkProblem(t, rec, req, rec.Body.Bytes(), *problem)
		return
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	if req.Method == http.MethodHead {
		if rec.Body.Len() != 0 {
			t.Errorf("HEAD answer has a body")
		}
		return
	}
	if !strings.HasSuffix(rec.Body.String(), "}\n") {
		t.Errorf("body does not end with a newline: %q", rec.Body)
	}
	compareBody(t, rec.Body.Bytes(), want)
}

func checkCommonHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	if got := resp.Header.Get("X-Request-Id"); got == "" {
		t.Errorf("X-Request-Id missing")
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
	}
}

// TestPersonIDUndecodable: a raw path whose escapes do not decode is a 400
// (net/http refuses such request lines, but a handler may be given one).
func TestPersonIDUndecodable(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	req := newRequest(http.MethodGet, "/api/v1/persons/x", rsaToken(t, goodClaims("read:persons")))
	req.URL.Path = "/api/v1/persons/%zz"
	req.URL.RawPath = "/api/v1/persons/%zz"
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("status = %d, want 400; body %s", rec.Code, rec.Body)
	}
	p := decodeProblem(t, rec)
	want := []invalidParam{{Name: "person_id", Reason: reasonEscape}}
	if !reflect.DeepEqual(p.InvalidParams, want) {
		t.Errorf("invalid_params = %+v, want %+v", p.InvalidParams, want)
	}
}

// TestEveryInvalidParameterListed: a 400 lists every invalid parameter,
// however many, so that the one the caller got wrong first (here
// consumer_id, which sorts after the 30 unknown "a" parameters) is never
// cut from the list.
func TestEveryInvalidParameterListed(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	query := "consumer_id=nope"
	var want []invalidParam
	for i := 0; i < 30; i++ {
		name := fmt.Sprintf("a%02d", i)
		query += "&" + name + "=1"
		want = append(want, invalidParam{Name: name, Reason: reasonUnknown})
	}
	want = append(want, invalidParam{Name: "consumer_id", Reason: reasonUUID})
	for _, target := range []string{"/api/v1/authorized-signers?" + query, "/api/v1/persons/nope?" + query} {
		t.Run(target[:20], func(t *testing.T) {
			req := newRequest(http.MethodGet, target, rsaToken(t, goodClaims("read:persons")))
			rec := serve(t, s, req)
			w := want
			if strings.HasPrefix(target, "/api/v1/persons/") {
				// consumer_id is unknown there, and person_id is invalid.
				w = append(append([]invalidParam(nil), want[:30]...), invalidParam{Name: "consumer_id", Reason: reasonUnknown}, invalidParam{Name: "person_id", Reason: reasonUUID})
			}
			checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probInvalidParams, params: w})
		})
	}
}
