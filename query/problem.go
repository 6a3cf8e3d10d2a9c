package query

import (
	"encoding/json"
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
)

// problemKinds is the one table of problem kinds: the stable type URI
// (problemBase + slug), the title and the status of each. openapi.yaml
// documents every entry, and a test holds the two in step.
var problemKinds = [...]struct {
	slug   string
	title  string
	status int
}{
	probInvalidParams:     {"invalid-parameters", "Request validation failed", http.StatusBadRequest},
	probUnauthorized:      {"unauthorized", "Authentication required", http.StatusUnauthorized},
	probInsufficientScope: {"insufficient-scope", "Insufficient scope", http.StatusForbidden},
	probForbidden:         {"forbidden", "Access to the resource is forbidden", http.StatusForbidden},
	probNotFound:          {"not-found", "Resource not found", http.StatusNotFound},
	probRouteNotFound:     {"route-not-found", "No such route", http.StatusNotFound},
	probMethodNotAllowed:  {"method-not-allowed", "Method not allowed", http.StatusMethodNotAllowed},
	probNotAcceptable:     {"not-acceptable", "Not acceptable", http.StatusNotAcceptable},
	probInternal:          {"internal-error", "Internal server error", http.StatusInternalServerError},
	probNotReady:          {"not-ready", "Service not ready", http.StatusServiceUnavailable},
	probAuditUnavailable:  {"audit-unavailable", "Audit ledger unavailable", http.StatusServiceUnavailable},
}

// typeURI returns the stable type URI of k.
func (k problemKind) typeURI() string { return problemBase + problemKinds[k].slug }

// invalidParam says why one request parameter is invalid (an RFC 9457
// extension member of 400 responses).
type invalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// problem is an RFC 9457 problem details body.
type problem struct {
	Type          string         `json:"type"`
	Title         string         `json:"title"`
	Status        int            `json:"status"`
	Detail        string         `json:"detail"`
	Instance      string         `json:"instance"`
	InvalidParams []invalidParam `json:"invalid_params,omitempty"`
}

// writeProblem writes a problem of kind k with detail for request r. Any
// headers (WWW-Authenticate, Allow) must be set before the call.
func writeProblem(w http.ResponseWriter, r *http.Request, k problemKind, detail string, params []invalidParam) {
	pk := problemKinds[k]
	body, err := json.Marshal(problem{
		Type:          k.typeURI(),
		Title:         pk.title,
		Status:        pk.status,
		Detail:        detail,
		Instance:      r.URL.EscapedPath(),
		InvalidParams: params,
	})
	if err != nil {
		// Unreachable: the body holds only strings and ints.
		body = []byte(`{}`)
	}
	writeBody(w, r, pk.status, "application/problem+json", append(body, '\n'))
}

// writeJSON writes v as a JSON body with status.
func writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeProblem(w, r, probInternal, "The server could not encode the response.", nil)
		return
	}
	// The newline ends the body as a terminal (curl) expects.
	writeBody(w, r, status, "application/json", append(body, '\n'))
}

// writeBody writes body with its Content-Type and Content-Length; for HEAD
// only the headers are written.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType string, body []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
