package query

import (
	"net/http"
	"strconv"
)

// problemBase is the prefix of every problem type URI. The URIs are
// identifiers, documented in openapi.yaml; they need not resolve.
const problemBase = "https://lookup.example/problems/"

// problemKind names one kind of problem the API reports.
type problemKind int

// The kinds of problem. Each has one entry in problemKinds.
const (
	probInvalidParams problemKind = iota
	probUnauthorized
	probInsufficientScope
	probForbidden
	probNotFound
	probRouteNotFound
	probMethodNotAllowed
	probNotAcceptable
	probInternal
	probNotReady
	probAuditUnavailable
	probPositionNotReached
	probStale
)

// problemKinds is the one table of problem kinds: the stable type URI
// (problemBase + slug), the title and the status of each. openapi.yaml
// documents every entry, and a test holds the two in step.
var problemKinds = [...]struct {
	slug   string
	title  string
	status int
}{
	probInvalidParams:      {"invalid-parameters", "Request validation failed", http.StatusBadRequest},
	probUnauthorized:       {"unauthorized", "Authentication required", http.StatusUnauthorized},
	probInsufficientScope:  {"insufficient-scope", "Insufficient scope", http.StatusForbidden},
	probForbidden:          {"forbidden", "Access to the resource is forbidden", http.StatusForbidden},
	probNotFound:           {"not-found", "Resource not found", http.StatusNotFound},
	probRouteNotFound:      {"route-not-found", "No such route", http.StatusNotFound},
	probMethodNotAllowed:   {"method-not-allowed", "Method not allowed", http.StatusMethodNotAllowed},
	probNotAcceptable:      {"not-acceptable", "Not acceptable", http.StatusNotAcceptable},
	probInternal:           {"internal-error", "Internal server error", http.StatusInternalServerError},
	probNotReady:           {"not-ready", "Service not ready", http.StatusServiceUnavailable},
	probAuditUnavailable:   {"audit-unavailable", "Audit ledger unavailable", http.StatusServiceUnavailable},
	probPositionNotReached: {"position-not-reached", "Position not reached", http.StatusServiceUnavailable},
	probStale:              {"stale", "Read model stale", http.StatusServiceUnavailable},
}

// invalidParam says why one request parameter is invalid (an RFC 9457
// extension member of 400 responses).
type invalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// writeProblem writes a problem of kind k with detail for request r: an
// RFC 9457 problem details body (members type, title, status, detail,
// instance and, for a 400, invalid_params). Any headers (WWW-Authenticate,
// Allow) must be set before the call.
func writeProblem(w http.ResponseWriter, r *http.Request, k problemKind, detail string, params []invalidParam) {
	pk := problemKinds[k]
	instance := r.URL.EscapedPath()
	n := 128 + len(pk.title) + len(detail) + len(instance)
	for _, p := range params {
		n += 32 + len(p.Name) + len(p.Reason)
	}
	b := make([]byte, 0, n)
	b = append(b, `{"type":"`...)
	b = append(b, problemBase...)
	b = append(b, pk.slug...)
	b = append(b, '"')
	b = appendJSONField(b, false, "title", pk.title)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(pk.status), 10)
	b = appendJSONField(b, false, "detail", detail)
	b = appendJSONField(b, false, "instance", instance)
	if len(params) > 0 {
		b = append(b, `,"invalid_params":[`...)
		for i, p := range params {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendJSONField(b, true, "name", p.Name)
			b = appendJSONField(b, false, "reason", p.Reason)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, '}', '\n')
	writeBody(w, r, pk.status, hdrProblemJSON, b)
}
