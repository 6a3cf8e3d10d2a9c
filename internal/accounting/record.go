package accounting

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
)

// Scope is the scope of the tokens the accounting service admits.
const Scope = "read:audit"

// ErrForbidden is what the servers' Authorize (fhir.HandlerConfig,
// officer.Config) returns for a caller it
// knows who is not allowed (403; any other error is a 401): the error of
// auth.Authenticator.Authorize for a token without read:audit.
var ErrForbidden = auth.ErrInsufficientScope

// Access is one search of a person's accounting, as Record records it.
type Access struct {
	RequestID string // made by the handler for each search, sent as X-Request-Id
	Caller    auth.Caller
	Purpose   string // the caller's Lookup-Purpose header ("" when none)
	Person    string // whose accounting was read
	// Persons are whose accounting a search by recipient read: each
	// person of the rows shown, once, in the order of the rows (none when
	// it showed no row). Person is then "".
	Persons []string
	// Operation is the ledger record's operation ("": OperationSearch).
	Operation string
	// Requested is the date of the person's request (YYYY-MM-DD) that an
	// accounting given to them answers (OperationProvide); "" otherwise.
	Requested string
}

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

// IsAccountingRead reports whether op is a read of the accounting itself.
func IsAccountingRead(op string) bool {
	switch op {
	case OperationSearch, OperationView, OperationExport, OperationViewRecipient, OperationExportRecipient, OperationProvide:
		return true
	}
	return false
}

// Discloser records a disclosure: the audit ledger (internal/ledger's
// Ledger), as it is the API's query.Auditor.
type Discloser interface {
	Disclose(ctx context.Context, d events.Disclosure) error
}

// LedgerRecorder returns the servers' Record (fhir.HandlerConfig,
// officer.Config), which records each search in the audit ledger a (a
// ledger.Ledger), as the API records a
// disclosure: one record of each person whose accounting was read (the
// Access's Person, or each of its Persons), with the operation
// OperationSearch (or the Access's Operation), the caller, the purpose
// and the request id, and no field disclosed (no ssn_mode, no date of
// birth). The search then shows in each person's own accounting. An
// Access of no person (a search by recipient that showed no row) records
// nothing: the ledger's records are each a person's.
func LedgerRecorder(a Discloser) func(ctx context.Context, acc Access) error {
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

// NewRequestID returns a random request id (32 hex digits).
func NewRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// PurposeHeader carries the caller's purpose of use, as on the API.
const PurposeHeader = "Lookup-Purpose"

// PurposeOf returns r's Lookup-Purpose: at most one, of 1 to 64 visible
// ASCII characters (the API's rule), or "" when there is none.
func PurposeOf(r *http.Request) (string, error) {
	vs := r.Header.Values(PurposeHeader)
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

// IsPersonID reports whether s is a person id as both servers take one:
// a lower-case UUID written 8-4-4-4-12.
func IsPersonID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if i == 8 || i == 13 || i == 18 || i == 23 {
			if c != '-' {
				return false
			}
		} else if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// AuthenticatedCaller is an Authorize of the servers for a handler behind
// auth.Authenticator.Require: the caller it admitted, or an error (a 401)
// when the request carries none.
func AuthenticatedCaller(r *http.Request) (auth.Caller, error) {
	c, ok := auth.CallerFrom(r.Context())
	if !ok {
		return c, errors.New("no authenticated caller")
	}
	return c, nil
}

// Reference returns the service's own reference of a ledger record: where
// the ledger stores it, its chain, its message's place in the chain and
// its place in the message ("<chain>-<seq>-<index>"; a record of format
// 1, one a message, "<chain>-<seq>"). In format 3 the index is the
// person's place among the persons the message's records list, counted
// across them in order: the same count as format 2's, one record a
// person (the references of docs/audit-ledger-format.md). Unlike the request id, which the
// caller may choose (and two callers may share), no caller sets it, no
// two records share it, and it is the same each time the record is read.
func Reference(r *ledger.Record) string {
	ref := r.Chain + "-" + strconv.FormatUint(r.Seq, 10)
	if r.Index > 0 {
		ref += "-" + strconv.Itoa(r.Index)
	}
	return ref
}

// NormalPersonID returns s with its ASCII upper-case letters in lower
// case, as the API takes a person id in either case: a person id in upper
// case is the same person's. Only ASCII is folded (strings.ToLower would
// make the Kelvin sign a k), so IsPersonID of the result still refuses
// anything but a UUID.
func NormalPersonID(s string) string {
	return strings.Map(func(c rune) rune {
		if c >= 'A' && c <= 'Z' {
			return c + ('a' - 'A')
		}
		return c
	}, s)
}
