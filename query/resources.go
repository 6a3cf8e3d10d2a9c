package query

import (
	"slices"
	"strings"

	"github.com/lookup/persons/events"
)

// The resources of the API (spec sections 2.1 to 2.3), written as JSON in
// the order and shape of openapi.yaml: optional members that are unknown
// are left out, never null. Each body ends with a newline, as a terminal
// (curl) expects.

// personJSON returns the Person resource of p.
func personJSON(p events.Person) []byte {
	n := 112 + len(p.ID) + len(p.BusinessID) + len(p.FirstName) + len(p.MiddleName) + len(p.LastName) + len(p.Type)
	b := make([]byte, 0, n)
	b = append(b, '{')
	b = appendJSONField(b, true, "person_id", p.ID)
	b = appendJSONField(b, false, "business_id", p.BusinessID)
	b = appendJSONField(b, false, "first_name", p.FirstName)
	if p.MiddleName != "" {
		b = appendJSONField(b, false, "middle_name", p.MiddleName)
	}
	b = appendJSONField(b, false, "last_name", p.LastName)
	b = appendJSONField(b, false, "type", string(p.Type))
	return append(b, '}', '\n')
}

// signersJSON returns the GetAuthorizedSignersResponse of signers:
// ordered by last_name, first_name, then signer id (byte-wise), with
// protected_personal_data when q asks for it. signers is not modified.
func signersJSON(signers []events.Signer, q signersQuery) []byte {
	sorted := make([]*events.Signer, len(signers))
	n := 16
	for i := range signers {
		sorted[i] = &signers[i]
		n += signerSize(&signers[i])
	}
	slices.SortFunc(sorted, compareSigners)
	b := make([]byte, 0, n)
	b = append(b, `{"items":[`...)
	for i, s := range sorted {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendSigner(b, s, q)
	}
	return append(b, ']', '}', '\n')
}

// compareSigners orders signers by last_name, first_name, then signer id.
func compareSigners(a, b *events.Signer) int {
	if c := strings.Compare(a.LastName, b.LastName); c != 0 {
		return c
	}
	if c := strings.Compare(a.FirstName, b.FirstName); c != 0 {
		return c
	}
	return strings.Compare(a.SignerID, b.SignerID)
}

// signerSize is the usual size of s as JSON (escapes may need more).
func signerSize(s *events.Signer) int {
	n := 160 + len(s.FirstName) + len(s.MiddleName) + len(s.LastName) + len(s.AccountAccess) + len(s.Status) + len(s.Type)
	if a := s.Address; a != nil {
		n += 96 + len(a.Line1) + len(a.Line2) + len(a.City) + len(a.State) + len(a.ZipCode) + len(a.Country)
	}
	if p := s.Phone; p != nil {
		n += 80 + len(p.CountryCode) + len(p.AreaCode) + len(p.Number) + len(p.Extension)
	}
	return n + 96 + len(s.SSN) + len(s.DateOfBirth)
}

// appendSigner appends one AuthorizedSigner (spec section 2.3).
func appendSigner(b []byte, s *events.Signer, q signersQuery) []byte {
	b = append(b, '{')
	b = appendJSONField(b, true, "first_name", s.FirstName)
	if s.MiddleName != "" {
		b = appendJSONField(b, false, "middle_name", s.MiddleName)
	}
	b = appendJSONField(b, false, "last_name", s.LastName)
	if s.HIPAAAuthorized {
		b = append(b, `,"hipaa_authorized":true`...)
	} else {
		b = append(b, `,"hipaa_authorized":false`...)
	}
	b = appendJSONField(b, false, "account_access", string(s.AccountAccess))
	b = appendJSONField(b, false, "status", string(s.Status))
	b = appendJSONField(b, false, "type", string(s.Type))
	if a := s.Address; a != nil {
		b = append(b, `,"address":{`...)
		b = appendJSONField(b, true, "line1", a.Line1)
		if a.Line2 != "" {
			b = appendJSONField(b, false, "line2", a.Line2)
		}
		b = appendJSONField(b, false, "city", a.City)
		b = appendJSONField(b, false, "state", a.State)
		b = appendJSONField(b, false, "zip_code", a.ZipCode)
		b = appendJSONField(b, false, "country", a.Country)
		b = append(b, '}')
	}
	if p := s.Phone; p != nil {
		b = append(b, `,"phone":{`...)
		b = appendJSONField(b, true, "country_code", p.CountryCode)
		b = appendJSONField(b, false, "area_code", p.AreaCode)
		b = appendJSONField(b, false, "number", p.Number)
		if p.Extension != "" {
			b = appendJSONField(b, false, "extension", p.Extension)
		}
		b = append(b, '}')
	}
	if q.expand {
		b = appendProtected(b, s, q.ssnMode)
	}
	return append(b, '}')
}

// appendProtected appends protected_personal_data: the SSN shaped by
// ssnMode and the date of birth, each where known; {} when neither is.
func appendProtected(b []byte, s *events.Signer, ssnMode string) []byte {
	b = append(b, `,"protected_personal_data":{`...)
	first := true
	if ssnShown(s.SSN, ssnMode) {
		b = append(b, `"social_security_number":"`...)
		b = appendSSN(b, s.SSN, ssnMode)
		b = append(b, '"')
		first = false
	}
	if s.DateOfBirth != "" {
		b = appendJSONField(b, first, "date_of_birth", s.DateOfBirth)
	}
	return append(b, '}')
}

// ssnShown reports whether a stored SSN is shown in ssn_mode mode: never
// for NONE, and never when it is not nine digits (left out rather than
// shown).
func ssnShown(ssn, mode string) bool {
	if len(ssn) != 9 || mode == ssnNone {
		return false
	}
	for i := 0; i < 9; i++ {
		if ssn[i] < '0' || ssn[i] > '9' {
			return false
		}
	}
	return mode == ssnLast4 || mode == ssnMasked || mode == ssnFull
}

// appendSSN appends a shown SSN (see ssnShown) per ssn_mode: LAST4 "6789",
// MASKED "***-**-6789", FULL "123-45-6789". It needs no JSON escaping.
func appendSSN(b []byte, ssn, mode string) []byte {
	switch mode {
	case ssnMasked:
		b = append(b, "***-**-"...)
	case ssnFull:
		b = append(b, ssn[:3]...)
		b = append(b, '-')
		b = append(b, ssn[3:5]...)
		b = append(b, '-')
	}
	return append(b, ssn[5:]...)
}
