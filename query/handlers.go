package query

import (
	"errors"
	"net/http"
	"sort"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/lookup/persons/events"
)

// personJSON is the Person resource (spec section 2.1).
type personJSON struct {
	PersonID   string            `json:"person_id"`
	BusinessID string            `json:"business_id"`
	FirstName  string            `json:"first_name"`
	MiddleName string            `json:"middle_name,omitempty"`
	LastName   string            `json:"last_name"`
	Type       events.PersonType `json:"type"`
}

// signersJSON is the GetAuthorizedSignersResponse (spec section 2.2).
type signersJSON struct {
	Items []signerJSON `json:"items"`
}

// signerJSON is one AuthorizedSigner (spec section 2.3).
type signerJSON struct {
	FirstName             string               `json:"first_name"`
	MiddleName            string               `json:"middle_name,omitempty"`
	LastName              string               `json:"last_name"`
	HIPAAAuthorized       bool                 `json:"hipaa_authorized"`
	AccountAccess         events.AccountAccess `json:"account_access"`
	Status                events.SignerStatus  `json:"status"`
	Type                  events.SignerType    `json:"type"`
	Address               *addressJSON         `json:"address,omitempty"`
	Phone                 *phoneJSON           `json:"phone,omitempty"`
	ProtectedPersonalData *protectedJSON       `json:"protected_personal_data,omitempty"`
}

type addressJSON struct {
	Line1   string `json:"line1"`
	Line2   string `json:"line2,omitempty"`
	City    string `json:"city"`
	State   string `json:"state"`
	ZipCode string `json:"zip_code"`
	Country string `json:"country"`
}

type phoneJSON struct {
	CountryCode string `json:"country_code"`
	AreaCode    string `json:"area_code"`
	Number      string `json:"number"`
	Extension   string `json:"extension,omitempty"`
}

// protectedJSON is protected_personal_data: {} when nothing is known.
type protectedJSON struct {
	SSN         string `json:"social_security_number,omitempty"`
	DateOfBirth string `json:"date_of_birth,omitempty"`
}

// handlePerson answers Get Person.
func handlePerson(reader Reader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := chi.URLParam(r, "person_id")
		_, bad := parseQuery(r.URL.RawQuery)
		if !isCanonicalUUID(id) {
			bad = append(bad, invalidParam{Name: "person_id", Reason: reasonUUID})
		}
		if len(bad) > 0 {
			writeProblem(w, r, probInvalidParams, "The request has invalid parameters.", sortParams(bad))
			return
		}
		p, err := reader.Person(r.Context(), strings.ToLower(id))
		if errors.Is(err, events.ErrNotFound) {
			writeProblem(w, r, probNotFound, "No person has this person_id.", nil)
			return
		}
		if err != nil {
			internalError(w, r, err)
			return
		}
		if !tenantAllows(r, p.BusinessID) {
			writeProblem(w, r, probForbidden, "The person belongs to a business outside the token's tenancy.", nil)
			return
		}
		writeJSON(w, r, http.StatusOK, personJSON{
			PersonID:   p.ID,
			BusinessID: p.BusinessID,
			FirstName:  p.FirstName,
			MiddleName: p.MiddleName,
			LastName:   p.LastName,
			Type:       p.Type,
		})
	})
}

// handleSigners answers Get Authorized Signers.
func handleSigners(reader Reader) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, bad := parseSignersQuery(r.URL.RawQuery)
		if len(bad) > 0 {
			writeProblem(w, r, probInvalidParams, "The request has invalid query parameters.", bad)
			return
		}
		if q.ssnMode == ssnFull {
			if p := principalFrom(r.Context()); p == nil || !p.hasScope(scopeSSN) {
				w.Header().Set("WWW-Authenticate", challenge("insufficient_scope",
					"scope read:persons:ssn is required for ssn_mode FULL", scopeRead+" "+scopeSSN))
				writeProblem(w, r, probInsufficientScope, "ssn_mode=FULL needs scope "+scopeSSN+".", nil)
				return
			}
		}
		consumer, signers, err := reader.Signers(r.Context(), q.consumerID)
		if errors.Is(err, events.ErrNotFound) || err == nil && len(signers) == 0 {
			writeProblem(w, r, probNotFound, "No authorized signers were found for this consumer_id.", nil)
			return
		}
		if err != nil {
			internalError(w, r, err)
			return
		}
		if !tenantAllows(r, consumer.BusinessID) {
			writeProblem(w, r, probForbidden, "The consumer belongs to a business outside the token's tenancy.", nil)
			return
		}
		writeJSON(w, r, http.StatusOK, signersResponse(signers, q))
	})
}

// signersResponse orders signers by last_name, first_name, then signer id
// (byte-wise) and shapes them for the answer.
func signersResponse(signers []events.Signer, q signersQuery) signersJSON {
	sorted := make([]*events.Signer, len(signers))
	for i := range signers {
		sorted[i] = &signers[i]
	}
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.LastName != b.LastName {
			return a.LastName < b.LastName
		}
		if a.FirstName != b.FirstName {
			return a.FirstName < b.FirstName
		}
		return a.SignerID < b.SignerID
	})
	out := signersJSON{Items: make([]signerJSON, len(sorted))}
	for i, s := range sorted {
		item := signerJSON{
			FirstName:       s.FirstName,
			MiddleName:      s.MiddleName,
			LastName:        s.LastName,
			HIPAAAuthorized: s.HIPAAAuthorized,
			AccountAccess:   s.AccountAccess,
			Status:          s.Status,
			Type:            s.Type,
		}
		if a := s.Address; a != nil {
			item.Address = &addressJSON{Line1: a.Line1, Line2: a.Line2, City: a.City, State: a.State, ZipCode: a.ZipCode, Country: a.Country}
		}
		if p := s.Phone; p != nil {
			item.Phone = &phoneJSON{CountryCode: p.CountryCode, AreaCode: p.AreaCode, Number: p.Number, Extension: p.Extension}
		}
		if q.expand {
			item.ProtectedPersonalData = &protectedJSON{
				SSN:         shapeSSN(s.SSN, q.ssnMode),
				DateOfBirth: s.DateOfBirth,
			}
		}
		out.Items[i] = item
	}
	return out
}

// shapeSSN renders a stored SSN (nine digits) per ssn_mode: LAST4 "6789",
// MASKED "***-**-6789", FULL "123-45-6789", NONE "". A stored value that is
// not nine digits is left out rather than shown.
func shapeSSN(ssn, mode string) string {
	if len(ssn) != 9 {
		return ""
	}
	for i := 0; i < 9; i++ {
		if ssn[i] < '0' || ssn[i] > '9' {
			return ""
		}
	}
	switch mode {
	case ssnLast4:
		return ssn[5:]
	case ssnMasked:
		return "***-**-" + ssn[5:]
	case ssnFull:
		return ssn[:3] + "-" + ssn[3:5] + "-" + ssn[5:]
	}
	return ""
}

// tenantAllows reports whether the request's principal may see a resource
// of businessID: always when tenancy is off (the principal has no
// tenancy claim recorded), else when the claim holds businessID.
func tenantAllows(r *http.Request, businessID string) bool {
	p := principalFrom(r.Context())
	if p == nil {
		return false
	}
	if !p.tenancyOn {
		return true
	}
	return p.mayAccess(businessID)
}

// internalError answers 500 without revealing err; the access log records
// the status.
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	if info := infoFrom(r.Context()); info != nil {
		info.err = err
	}
	writeProblem(w, r, probInternal, "The server failed to answer the request.", nil)
}
