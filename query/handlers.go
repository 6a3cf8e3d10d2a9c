package query

import (
	"context"
	"errors"
	"net/http"
	"net/url"
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

// handlePerson answers Get Person. ready gates the read model. Get Person
// discloses no protected data: audit only validates Lookup-Purpose.
func handlePerson(reader Reader, ready func() bool, audit auditing) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, bad := parseQuery(r.URL.RawQuery)
		_, badPurpose := audit.purpose(r, false) // audit
		bad = append(bad, badPurpose...)
		id, reason := personID(r)
		if reason != "" {
			bad = append(bad, invalidParam{Name: "person_id", Reason: reason})
		}
		if len(bad) > 0 {
			writeProblem(w, r, probInvalidParams, "The request has invalid parameters.", sortParams(bad))
			return
		}
		if !ready() {
			notReady(w, r)
			return
		}
		p, err := reader.Person(r.Context(), id)
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

// personID returns the person_id path parameter of r, percent-decoded and
// lower-cased, or the reason it is invalid. chi hands back the escaped
// segment when the request path has a raw form (r.URL.RawPath), and the
// decoded one otherwise, so only the former is decoded here.
func personID(r *http.Request) (id, reason string) {
	id = chi.URLParam(r, "person_id")
	if r.URL.RawPath != "" {
		dec, err := url.PathUnescape(id)
		if err != nil {
			return "", reasonEscape
		}
		id = dec
	}
	if !isCanonicalUUID(id) {
		return "", reasonUUID
	}
	return strings.ToLower(id), ""
}

// handleSigners answers Get Authorized Signers. ready gates the read
// model. The scope needed by ssn_mode=FULL is checked before, by
// authenticate. audit records the protected data disclosed.
func handleSigners(reader Reader, ready func() bool, audit auditing) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, bad := parseSignersQuery(r.URL.RawQuery)
		purpose, badPurpose := audit.purpose(r, q.expand) // audit
		if len(badPurpose) > 0 {
			bad = sortParams(append(bad, badPurpose...))
		}
		if len(bad) > 0 {
			writeProblem(w, r, probInvalidParams, "The request has invalid parameters.", bad)
			return
		}
		if !ready() {
			notReady(w, r)
			return
		}
		consumer, signers, err := reader.Signers(r.Context(), q.consumerID)
		if errors.Is(err, events.ErrNotFound) {
			writeProblem(w, r, probNotFound, "No authorized signers were found for this consumer_id.", nil)
			return
		}
		if err != nil {
			internalError(w, r, err)
			return
		}
		// Tenancy first: another tenant's consumer is a 403 even when it
		// has no signers.
		if !tenantAllows(r, consumer.BusinessID) {
			writeProblem(w, r, probForbidden, "The consumer belongs to a business outside the token's tenancy.", nil)
			return
		}
		if len(signers) == 0 {
			writeProblem(w, r, probNotFound, "No authorized signers were found for this consumer_id.", nil)
			return
		}
		body := signersResponse(signers, q)
		if !audit.disclose(w, r, opGetAuthorizedSigners, purpose, signerDisclosures(signers, q)) {
			return
		}
		writeJSON(w, r, http.StatusOK, body)
	})
}

// retryAfterSeconds is the Retry-After of a 503 not-ready answer.
const retryAfterSeconds = "5"

// notReady answers 503: the read model has not caught up with the stream
// yet, so a miss could be a false 404.
func notReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", retryAfterSeconds)
	writeProblem(w, r, probNotReady, "The read model has not caught up with the event stream yet; retry later.", nil)
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
// the status and err. When err is the cancellation of a request whose
// client went away, nothing is answered (nobody reads it) and the access
// log records 499 at Info.
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	info := infoFrom(r.Context())
	if info != nil {
		info.err = err
	}
	if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		if info != nil {
			info.clientGone = true
		}
		return
	}
	writeProblem(w, r, probInternal, "The server failed to answer the request.", nil)
}
