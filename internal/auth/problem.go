package auth

import (
	"net/http"
	"strconv"

	"github.com/lookup/persons/internal/jsonstr"
)

// The problems an Authenticator answers, byte for byte as the API
// (query) answers the same ones: the type URIs, titles and statuses of
// query's problemKinds and the members of its RFC 9457 bodies. A test
// (TestAuthenticatorAnswersAsTheAPI) holds the two in step.
const problemBase = "https://lookup.example/problems/"

// problemKind names one kind of problem an Authenticator answers.
type problemKind int

const (
	probUnauthorized problemKind = iota
	probInsufficientScope
	probInternal
)

var problemKinds = [...]struct {
	slug   string
	title  string
	status int
}{
	probUnauthorized:      {"unauthorized", "Authentication required", http.StatusUnauthorized},
	probInsufficientScope: {"insufficient-scope", "Insufficient scope", http.StatusForbidden},
	probInternal:          {"internal-error", "Internal server error", http.StatusInternalServerError},
}

// writeProblem writes a problem of kind k with detail for request r: an
// RFC 9457 problem details body (members type, title, status, detail,
// instance). Any headers (WWW-Authenticate) must be set before the call.
func writeProblem(w http.ResponseWriter, r *http.Request, k problemKind, detail string) {
	pk := problemKinds[k]
	instance := r.URL.EscapedPath()
	b := make([]byte, 0, 128+len(pk.title)+len(detail)+len(instance))
	b = append(b, `{"type":"`...)
	b = append(b, problemBase...)
	b = append(b, pk.slug...)
	b = append(b, `","title":`...)
	b = jsonstr.Append(b, pk.title)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(pk.status), 10)
	b = append(b, `,"detail":`...)
	b = jsonstr.Append(b, detail)
	b = append(b, `,"instance":`...)
	b = jsonstr.Append(b, instance)
	b = append(b, '}', '\n')
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(pk.status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b) //nolint:gosec // G705: body is JSON we encoded, served with its own Content-Type
	}
}

// internalError answers a request that could not be judged (its context
// ended during the verification) as the API does.
func internalError(w http.ResponseWriter, r *http.Request, _ error) {
	writeProblem(w, r, probInternal, "The server failed to answer the request.")
}
