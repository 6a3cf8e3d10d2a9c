package accounting

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/query"
)

// OperationSearch is the operation of the ledger record of a search of
// the accounting (the FHIR interaction: a search of AuditEvent).
const OperationSearch = "searchAuditEvent"

// The operations of the ledger records of the officer's page: a view of
// a page of a person's accounting, and its CSV export; a view of a page
// of the search by recipient, and its CSV export (one record of each
// person the page or the export shows).
const (
	OperationView            = "viewAccounting"
	OperationExport          = "exportAccounting"
	OperationViewRecipient   = "viewRecipientAccounting"
	OperationExportRecipient = "exportRecipientAccounting"
)

// OperationProvide is the operation of the ledger record of an accounting
// of disclosures given to the person (the letter), with the date of their
// request: the record 45 CFR 164.528(d) asks the entity to keep.
const OperationProvide = "provideAccounting"

// isAccountingRead reports whether op is a read of the accounting itself.
func isAccountingRead(op string) bool {
	switch op {
	case OperationSearch, OperationView, OperationExport, OperationViewRecipient, OperationExportRecipient, OperationProvide:
		return true
	}
	return false
}

// LedgerRecorder returns a HandlerConfig.Record that records each search
// in the audit ledger a (an audit.Ledger), as the API records a
// disclosure: one record of each person whose accounting was read (the
// Access's Person, or each of its Persons), with the operation
// OperationSearch (or the Access's Operation), the caller, the purpose
// and the request id, and no field disclosed (no ssn_mode, no date of
// birth). The search then shows in each person's own accounting. An
// Access of no person (a search by recipient that showed no row) records
// nothing: the ledger's records are each a person's.
func LedgerRecorder(a query.Auditor) func(ctx context.Context, acc Access) error {
	return func(ctx context.Context, acc Access) error {
		op := acc.Operation
		if op == "" {
			op = OperationSearch
		}
		ps := make([]events.DisclosedPerson, 0, 1+len(acc.Persons))
		if acc.Person != "" {
			ps = append(ps, events.DisclosedPerson{ID: acc.Person})
		}
		for _, p := range acc.Persons {
			ps = append(ps, events.DisclosedPerson{ID: p})
		}
		if len(ps) == 0 {
			return nil
		}
		return a.Disclose(ctx, events.Disclosure{
			RequestID: acc.RequestID,
			Subject:   acc.Caller.Subject,
			Client:    acc.Caller.Client,
			Operation: op,
			Purpose:   acc.Purpose,
			Requested: acc.Requested,
			Persons:   ps,
		})
	}
}

// newRequestID returns a random request id (32 hex digits).
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// purposeHeader carries the caller's purpose of use, as on the API.
const purposeHeader = "Lookup-Purpose"

// purposeOf returns r's Lookup-Purpose: at most one, of 1 to 64 visible
// ASCII characters (the API's rule), or "" when there is none.
func purposeOf(r *http.Request) (string, error) {
	vs := r.Header.Values(purposeHeader)
	switch {
	case len(vs) == 0:
		return "", nil
	case len(vs) > 1:
		return "", errors.New("Lookup-Purpose: given more than once")
	case len(vs[0]) > 64:
		return "", errors.New("Lookup-Purpose: must be at most 64 characters")
	}
	for i := 0; i < len(vs[0]); i++ {
		if c := vs[0][i]; c < 0x21 || c > 0x7e {
			return "", errors.New("Lookup-Purpose: must hold only visible ASCII characters")
		}
	}
	return vs[0], nil
}
