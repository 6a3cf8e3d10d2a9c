package auth

import (
	"net/http"

	"github.com/lookup/persons/internal/problem"
)

// The problems an Authenticator answers are the API's: the one table and
// writer of internal/problem, under the names this package's code uses.
type problemKind = problem.Kind

const (
	probUnauthorized      = problem.Unauthorized
	probInsufficientScope = problem.InsufficientScope
	probInternal          = problem.Internal
)

var problemKinds = problem.Kinds

// writeProblem writes a problem of kind k with detail for request r (see
// problem.Write). Any headers (WWW-Authenticate) must be set before the
// call.
func writeProblem(w http.ResponseWriter, r *http.Request, k problemKind, detail string) {
	problem.Write(w, r, k, detail, nil)
}

// internalError answers a request that could not be judged (its context
// ended during the verification) as the API does.
func internalError(w http.ResponseWriter, r *http.Request, _ error) {
	writeProblem(w, r, probInternal, problem.DetailInternal)
}
