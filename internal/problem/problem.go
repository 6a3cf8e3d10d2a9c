// Package problem is the one table of the problems the lookup API answers
// and the one writer of their RFC 9457 bodies: the API (query), the
// accounting service's token checks (internal/auth's Authenticator) and
// the OpenAPI document (query/openapi.yaml, held to Kinds by query's
// tests) share them, so that a 401 reads the same wherever it comes from.
//
// Files: problem.go.
package problem

import (
	"net/http"
	"strconv"

	"github.com/lookup/persons/internal/jsonstr"
)

// Base is the prefix of every problem type URI. The URIs are identifiers,
// documented in openapi.yaml; they need not resolve.
const Base = "https://lookup.example/problems/"

// Kind names one kind of problem.
type Kind int

// The kinds of problem. Each has one entry in Kinds.
const (
	InvalidParams Kind = iota
	Unauthorized
	InsufficientScope
	Forbidden
	NotFound
	RouteNotFound
	MethodNotAllowed
	NotAcceptable
	Internal
	NotReady
	AuditUnavailable
	PositionNotReached
	Stale
)

// KindInfo is what a kind of problem says: its type URI's slug (after
// Base), its title and its HTTP status.
type KindInfo struct {
	Slug   string
	Title  string
	Status int
}

// Kinds is the one table of problem kinds, indexed by Kind.
var Kinds = [...]KindInfo{
	InvalidParams:      {"invalid-parameters", "Request validation failed", http.StatusBadRequest},
	Unauthorized:       {"unauthorized", "Authentication required", http.StatusUnauthorized},
	InsufficientScope:  {"insufficient-scope", "Insufficient scope", http.StatusForbidden},
	Forbidden:          {"forbidden", "Access to the resource is forbidden", http.StatusForbidden},
	NotFound:           {"not-found", "Resource not found", http.StatusNotFound},
	RouteNotFound:      {"route-not-found", "No such route", http.StatusNotFound},
	MethodNotAllowed:   {"method-not-allowed", "Method not allowed", http.StatusMethodNotAllowed},
	NotAcceptable:      {"not-acceptable", "Not acceptable", http.StatusNotAcceptable},
	Internal:           {"internal-error", "Internal server error", http.StatusInternalServerError},
	NotReady:           {"not-ready", "Service not ready", http.StatusServiceUnavailable},
	AuditUnavailable:   {"audit-unavailable", "Audit ledger unavailable", http.StatusServiceUnavailable},
	PositionNotReached: {"position-not-reached", "Position not reached", http.StatusServiceUnavailable},
	Stale:              {"stale", "Read model stale", http.StatusServiceUnavailable},
}

// Status is the HTTP status of a problem of kind k.
func (k Kind) Status() int { return Kinds[k].Status }

// InvalidParam says why one request parameter is invalid (an RFC 9457
// extension member of 400 responses).
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// AppendBody appends to b the RFC 9457 body of a problem of kind k: the
// members type, title, status, detail, instance and, when params are
// given, invalid_params, then a newline. It is byte for byte what
// encoding/json writes for the same members (query's tests hold it).
func AppendBody(b []byte, k Kind, detail, instance string, params []InvalidParam) []byte {
	pk := Kinds[k]
	b = append(b, `{"type":"`...)
	b = append(b, Base...)
	b = append(b, pk.Slug...)
	b = append(b, `","title":`...)
	b = jsonstr.Append(b, pk.Title)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(pk.Status), 10)
	b = append(b, `,"detail":`...)
	b = jsonstr.Append(b, detail)
	b = append(b, `,"instance":`...)
	b = jsonstr.Append(b, instance)
	if len(params) > 0 {
		b = append(b, `,"invalid_params":[`...)
		for i, p := range params {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"name":`...)
			b = jsonstr.Append(b, p.Name)
			b = append(b, `,"reason":`...)
			b = jsonstr.Append(b, p.Reason)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}', '\n')
}

// Size is a capacity for AppendBody's buffer that fits most bodies.
func Size(k Kind, detail, instance string, params []InvalidParam) int {
	n := 128 + len(Kinds[k].Title) + len(detail) + len(instance)
	for _, p := range params {
		n += 32 + len(p.Name) + len(p.Reason)
	}
	return n
}

// Write answers r with a problem of kind k: its body, Content-Type
// application/problem+json and Content-Length (for HEAD, the headers
// alone). Any other headers (WWW-Authenticate, Allow) must be set before.
func Write(w http.ResponseWriter, r *http.Request, k Kind, detail string, params []InvalidParam) {
	instance := r.URL.EscapedPath()
	b := AppendBody(make([]byte, 0, Size(k, detail, instance, params)), k, detail, instance, params)
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(k.Status())
	if r.Method != http.MethodHead {
		_, _ = w.Write(b) //nolint:gosec // G705: body is JSON we encoded, served with its own Content-Type
	}
}

// TypeURI is the type URI of a problem of kind k.
func (k Kind) TypeURI() string { return Base + Kinds[k].Slug }

// The details of the problems the service may answer any request with,
// whatever its data: written by the API and the Authenticator, and by the
// test server lookuptest when a test injects one, so that all say the same.
const (
	DetailNotReady           = "The read model has not caught up with the event stream yet; retry later."
	DetailAuditUnavailable   = "The disclosure could not be recorded in the audit ledger, so no protected data is sent; retry later."
	DetailStale              = "The read model has fallen behind the event stream, or lost it, for longer than the staleness bound; retry later."
	DetailPositionNotReached = "The read model has not applied the position given in Lookup-Min-Position within the wait; retry later."
	DetailInternal           = "The server failed to answer the request."
)
