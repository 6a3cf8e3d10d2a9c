package query

import (
	"context"
	"net/http"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/problem"
)

// Auditor records the disclosures of protected personal data (an SSN, full
// or partial, or a date of birth) before they are sent. The ledger (internal/ledger)
// implements it; the API calls it after it has built an answer that
// discloses protected data and before it writes it.
type Auditor interface {
	// Disclose records d. An error means the disclosure could not be
	// recorded as the auditor's mode demands: the API then answers 503
	// audit-unavailable and sends nothing.
	Disclose(ctx context.Context, d events.Disclosure) error
}

// Disclosure is the record of one answer that discloses protected data,
// in the service's shared vocabulary.
//
// Deprecated: use events.Disclosure; this alias stays for the programs
// that named it here.
type Disclosure = events.Disclosure

// DisclosedPerson is one person whose protected data an answer holds.
//
// Deprecated: use events.DisclosedPerson.
type DisclosedPerson = events.DisclosedPerson

// Operation ids recorded in disclosures.
const opGetAuthorizedSigners = "getAuthorizedSigners"

// purposeHeader carries the caller's purpose of use.
const purposeHeader = "Lookup-Purpose"

// maxPurposeLen is the longest Lookup-Purpose accepted.
const maxPurposeLen = 64

// auditing is the API's part of the disclosure ledger.
type auditing struct {
	auditor        Auditor // nil: disclosures are not recorded
	requirePurpose bool
}

// purpose returns the request's Lookup-Purpose and the invalid parameter
// it makes, if any: not visible ASCII, longer than 64, repeated, or missing
// while required for a request that asks for protected data.
func (a auditing) purpose(r *http.Request, asksProtected bool) (string, []invalidParam) {
	vs := r.Header.Values(purposeHeader)
	bad := func(reason string) []invalidParam {
		return []invalidParam{{Name: purposeHeader, Reason: reason}}
	}
	switch {
	case len(vs) > 1:
		return "", bad(reasonRepeated)
	case len(vs) == 0 || vs[0] == "":
		if a.requirePurpose && asksProtected {
			return "", bad(reasonRequired)
		}
		return "", nil
	case len(vs[0]) > maxPurposeLen:
		return "", bad("must be at most 64 characters")
	}
	for i := 0; i < len(vs[0]); i++ {
		if c := vs[0][i]; c < 0x21 || c > 0x7e {
			return "", bad("must hold only visible ASCII characters")
		}
	}
	return vs[0], nil
}

// disclose records the disclosure of persons by r's answer, and reports
// whether the answer may be sent; when not, it has answered 503. Nothing
// is recorded for a HEAD request (no body is sent), for an answer that
// discloses nobody, or without an auditor.
func (a auditing) disclose(w http.ResponseWriter, r *http.Request, op, purpose string, persons []events.DisclosedPerson) bool {
	if a.auditor == nil || len(persons) == 0 || r.Method == http.MethodHead {
		return true
	}
	d := events.Disclosure{Operation: op, Purpose: purpose, Persons: persons}
	if info := infoFrom(r.Context()); info != nil {
		d.RequestID = info.requestID
	}
	if p := principalFrom(r.Context()); p != nil {
		d.Subject, d.Client = p.Subject(), p.Client()
		if p.TenancyOn() {
			d.Tenants = p.Tenants()
		}
	}
	if err := a.auditor.Disclose(r.Context(), d); err != nil {
		if info := infoFrom(r.Context()); info != nil {
			info.err = err
		}
		w.Header().Set("Retry-After", retryAfterSeconds)
		writeProblem(w, r, probAuditUnavailable,
			problem.DetailAuditUnavailable, nil)
		return false
	}
	return true
}

// signerDisclosures returns the signers whose protected data the answer
// to q holds: with expand, those with an SSN shown in q's mode or a date
// of birth.
func signerDisclosures(signers []events.Signer, q signersQuery) []events.DisclosedPerson {
	if !q.expand {
		return nil
	}
	out := make([]events.DisclosedPerson, 0, len(signers))
	for i := range signers {
		s := &signers[i]
		d := events.DisclosedPerson{ID: s.SignerID, DOB: s.DateOfBirth != ""}
		if ssnShown(s.SSN, q.ssnMode) {
			d.SSNMode = q.ssnMode
		}
		if d.DOB || d.SSNMode != "" {
			out = append(out, d)
		}
	}
	return out
}
