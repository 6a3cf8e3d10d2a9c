package query

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/lookup/persons/events"
)

// problemBody is an RFC 9457 problem details body, as the tests decode it.
type problemBody struct {
	Type          string         `json:"type"`
	Title         string         `json:"title"`
	Status        int            `json:"status"`
	Detail        string         `json:"detail"`
	Instance      string         `json:"instance"`
	InvalidParams []invalidParam `json:"invalid_params,omitempty"`
}

// The shapes the answers had when encoding/json wrote them: the hand-written
// encoders must produce exactly json.Marshal's bytes of these.
type (
	refPerson struct {
		PersonID   string            `json:"person_id"`
		BusinessID string            `json:"business_id"`
		FirstName  string            `json:"first_name"`
		MiddleName string            `json:"middle_name,omitempty"`
		LastName   string            `json:"last_name"`
		Type       events.PersonType `json:"type"`
	}
	refSigners struct {
		Items []refSigner `json:"items"`
	}
	refSigner struct {
		FirstName             string               `json:"first_name"`
		MiddleName            string               `json:"middle_name,omitempty"`
		LastName              string               `json:"last_name"`
		HIPAAAuthorized       bool                 `json:"hipaa_authorized"`
		AccountAccess         events.AccountAccess `json:"account_access"`
		Status                events.SignerStatus  `json:"status"`
		Type                  events.SignerType    `json:"type"`
		Address               *events.Address      `json:"address,omitempty"`
		Phone                 *events.Phone        `json:"phone,omitempty"`
		ProtectedPersonalData *refProtected        `json:"protected_personal_data,omitempty"`
	}
	refProtected struct {
		SSN         string `json:"social_security_number,omitempty"`
		DateOfBirth string `json:"date_of_birth,omitempty"`
	}
)

// refShapeSSN is the SSN shaping the API documents.
func refShapeSSN(ssn, mode string) string {
	if !ssnShown(ssn, mode) {
		return ""
	}
	switch mode {
	case ssnLast4:
		return ssn[5:]
	case ssnMasked:
		return "***-**-" + ssn[5:]
	}
	return ssn[:3] + "-" + ssn[3:5] + "-" + ssn[5:]
}

func marshalLine(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func refPersonJSON(t testing.TB, p events.Person) []byte {
	return marshalLine(t, refPerson{p.ID, p.BusinessID, p.FirstName, p.MiddleName, p.LastName, p.Type})
}

func refSignersJSON(t testing.TB, signers []events.Signer, q signersQuery) []byte {
	sorted := append([]events.Signer(nil), signers...)
	sort.SliceStable(sorted, func(i, j int) bool { return compareSigners(&sorted[i], &sorted[j]) < 0 })
	out := refSigners{Items: []refSigner{}}
	for _, s := range sorted {
		item := refSigner{s.FirstName, s.MiddleName, s.LastName, s.HIPAAAuthorized, s.AccountAccess, s.Status, s.Type, s.Address, s.Phone, nil}
		if q.expand {
			item.ProtectedPersonalData = &refProtected{refShapeSSN(s.SSN, q.ssnMode), s.DateOfBirth}
		}
		out.Items = append(out.Items, item)
	}
	return marshalLine(t, out)
}

// awkward are strings that encoding/json escapes in every way it can.
var awkward = []string{
	"", "plain", `quote " and \ backslash`, "<script>&amp;</script>", "tab\tnew\nline\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "caf\u00e9 \u4e16\u754c \U0001F600", "bad \xff\xfe utf-8 \xc3", "line\u2028para\u2029end",
}

// TestEncodingMatchesEncodingJSON: the hand-written answers are byte for
// byte what encoding/json writes of the documented shapes.
func TestEncodingMatchesEncodingJSON(t *testing.T) {
	for _, s := range awkward {
		p := events.Person{ID: s, BusinessID: s + "b", FirstName: s, MiddleName: s, LastName: s, Type: events.PersonType(s)}
		if got, want := personJSON(p), refPersonJSON(t, p); !bytes.Equal(got, want) {
			t.Errorf("person %q:\n got %s\nwant %s", s, got, want)
		}
		signers := append(fixtureSigners(), events.Signer{SignerID: s, FirstName: s, MiddleName: s, LastName: s,
			HIPAAAuthorized: true, AccountAccess: events.AccountAccess(s), Status: events.SignerStatus(s), Type: events.SignerType(s),
			Address: &events.Address{Line1: s, Line2: s, City: s, State: s, ZipCode: s, Country: s},
			Phone:   &events.Phone{CountryCode: s, AreaCode: s, Number: s, Extension: s},
			SSN:     "123456789", DateOfBirth: s})
		for _, q := range []signersQuery{{}, {expand: true, ssnMode: ssnLast4}, {expand: true, ssnMode: ssnMasked},
			{expand: true, ssnMode: ssnFull}, {expand: true, ssnMode: ssnNone}} {
			if got, want := signersJSON(signers, q), refSignersJSON(t, signers, q); !bytes.Equal(got, want) {
				t.Errorf("signers %q %+v:\n got %s\nwant %s", s, q, got, want)
			}
		}
		params := []invalidParam{{Name: s, Reason: reasonUnknown}, {Name: "x", Reason: s}}
		for _, ps := range [][]invalidParam{nil, params} {
			req := httptest.NewRequest(http.MethodGet, "/api/v1/persons/x", nil)
			req.URL.RawPath = "/api/v1/persons/" + s
			rec := httptest.NewRecorder()
			writeProblem(rec, req, probInvalidParams, s, ps)
			want := marshalLine(t, problemBody{probInvalidParams.TypeURI(), problemKinds[probInvalidParams].Title, 400, s, req.URL.EscapedPath(), ps})
			if !bytes.Equal(rec.Body.Bytes(), want) {
				t.Errorf("problem %q:\n got %s\nwant %s", s, rec.Body, want)
			}
		}
	}
}
