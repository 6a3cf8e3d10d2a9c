package query

import (
	"net/http"

	"github.com/lookup/persons/internal/problem"
)

// The API's problems are the one table and writer of internal/problem,
// under the names this package's code has always used.
const problemBase = problem.Base

type (
	problemKind  = problem.Kind
	invalidParam = problem.InvalidParam
)

const (
	probInvalidParams      = problem.InvalidParams
	probUnauthorized       = problem.Unauthorized
	probInsufficientScope  = problem.InsufficientScope
	probForbidden          = problem.Forbidden
	probNotFound           = problem.NotFound
	probRouteNotFound      = problem.RouteNotFound
	probMethodNotAllowed   = problem.MethodNotAllowed
	probNotAcceptable      = problem.NotAcceptable
	probInternal           = problem.Internal
	probNotReady           = problem.NotReady
	probAuditUnavailable   = problem.AuditUnavailable
	probPositionNotReached = problem.PositionNotReached
	probStale              = problem.Stale
)

// problemKinds is internal/problem's table; openapi.yaml documents every
// entry, and a test holds the two in step.
var problemKinds = problem.Kinds

// writeProblem writes a problem of kind k with detail for request r (see
// problem.AppendBody). Any headers (WWW-Authenticate, Allow) must be set
// before the call.
func writeProblem(w http.ResponseWriter, r *http.Request, k problemKind, detail string, params []invalidParam) {
	instance := r.URL.EscapedPath()
	b := problem.AppendBody(make([]byte, 0, problem.Size(k, detail, instance, params)), k, detail, instance, params)
	writeBody(w, r, k.Status(), hdrProblemJSON, b)
}
