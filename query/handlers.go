package query

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/go-chi/chi/v5"
	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/problem"
)

// handlePerson answers Get Person. fresh gates the read model. Get Person
// discloses no protected data: audit only validates Lookup-Purpose.
func handlePerson(reader Reader, fresh *freshness, audit auditing) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, bad, _ := parseQuery(r.URL.RawQuery)
		_, badPurpose := audit.purpose(r, false)
		bad = append(bad, badPurpose...)
		minPos, badPos := parseMinPosition(r)
		bad = append(bad, badPos...)
		id, reason := personID(r)
		if reason != "" {
			bad = append(bad, invalidParam{Name: "person_id", Reason: reason})
		}
		if len(bad) > 0 {
			writeProblem(w, r, probInvalidParams, "The request has invalid parameters.", sortParams(bad))
			return
		}
		if !fresh.admit(w, r, minPos) {
			return
		}
		p, err := reader.Person(r.Context(), id)
		if readFailed(w, r, err, "No person has this person_id.") {
			return
		}
		if !tenantAllows(r, p.BusinessID) {
			writeProblem(w, r, probForbidden, "The person belongs to a business outside the token's tenancy.", nil)
			return
		}
		writeBody(w, r, http.StatusOK, hdrJSON, personJSON(p))
	})
}

// readFailed answers a failed read of the read model, if err is one: 404
// with the detail notFound when there is no such resource, 500 otherwise.
// It reports whether it answered.
func readFailed(w http.ResponseWriter, r *http.Request, err error, notFound string) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, events.ErrNotFound):
		writeProblem(w, r, probNotFound, notFound, nil)
	default:
		internalError(w, r, err)
	}
	return true
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
	norm, ok := events.NormalizeID(id)
	if !ok {
		return "", reasonUUID
	}
	return norm, ""
}

// handleSigners answers Get Authorized Signers. fresh gates the read
// model. The scope needed by ssn_mode=FULL is checked before, by
// authenticate. audit records the protected data disclosed before the
// answer is sent.
func handleSigners(reader Reader, fresh *freshness, audit auditing) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, bad := parseSignersQuery(r.URL.RawQuery)
		purpose, badPurpose := audit.purpose(r, q.expand)
		minPos, badPos := parseMinPosition(r)
		badPurpose = append(badPurpose, badPos...)
		if len(badPurpose) > 0 {
			bad = sortParams(append(bad, badPurpose...))
			writeProblem(w, r, probInvalidParams, "The request has invalid parameters.", bad)
			return
		}
		if len(bad) > 0 {
			writeProblem(w, r, probInvalidParams, "The request has invalid query parameters.", bad)
			return
		}
		if !fresh.admit(w, r, minPos) {
			return
		}
		consumer, signers, err := reader.Signers(r.Context(), q.consumerID)
		if readFailed(w, r, err, "No authorized signers were found for this consumer_id.") {
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
		if audit.auditor != nil && !audit.disclose(w, r, opGetAuthorizedSigners, purpose, signerDisclosures(signers, q)) {
			return
		}
		writeBody(w, r, http.StatusOK, hdrJSON, signersJSON(signers, q))
	})
}

// retryAfterSeconds is the Retry-After of a 503 not-ready answer.
const retryAfterSeconds = "5"

// notReady answers 503: the read model has not caught up with the stream
// yet, so a miss could be a false 404.
func notReady(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", retryAfterSeconds)
	writeProblem(w, r, probNotReady, problem.DetailNotReady, nil)
}

// tenantAllows reports whether the request's principal may see a resource
// of businessID: always when tenancy is off (the principal has no
// tenancy claim recorded), else when the claim holds businessID.
func tenantAllows(r *http.Request, businessID string) bool {
	p := principalFrom(r.Context())
	if p == nil {
		return false
	}
	if !p.TenancyOn() {
		return true
	}
	return p.MayAccess(businessID)
}

// internalError answers 500 without revealing err; the access log records
// the status and err.
func internalError(w http.ResponseWriter, r *http.Request, err error) {
	if info := infoFrom(r.Context()); info != nil {
		info.err = err
	}
	writeProblem(w, r, probInternal, problem.DetailInternal, nil)
}
