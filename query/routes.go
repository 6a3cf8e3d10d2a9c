package query

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// allowedMethods is the Allow header of every route: each answers GET and
// HEAD only.
const allowedMethods = "GET, HEAD"

// authMiddleware builds the authentication middleware of an operation;
// needsSSN, when not nil, says whether a request needs scope
// read:persons:ssn (Server.authenticate).
type authMiddleware func(needsSSN func(*http.Request) bool) func(http.Handler) http.Handler

// routes is the one place every route of the API is declared, and with it
// the order of checks (see the package doc): observe (headers, access log,
// metrics, panics), OPTIONS * (answered for the whole server), routing
// (404, 405), then per operation authenticate (401, 403), checkRequestID
// (400), requireJSON (406), and the handler (400 parameters, 503 not
// ready, the resource).
func (s *Server) routes(authenticate authMiddleware) chi.Router {
	r := chi.NewRouter()
	r.Use(s.observe, answerServerOptions)
	r.NotFound(handleRouteNotFound())
	r.MethodNotAllowed(handleMethodNotAllowed(r))

	openapi := checkRequestID(handleOpenAPI())
	r.Method(http.MethodGet, "/openapi.yaml", openapi)
	r.Method(http.MethodHead, "/openapi.yaml", openapi)

	r.Group(func(r chi.Router) {
		r.Use(authenticate(asksFullSSN), checkRequestID, requireJSON)
		signers := handleSigners(s.reader, s.fresh, s.audit)
		r.Method(http.MethodGet, "/api/v1/authorized-signers", signers)
		r.Method(http.MethodHead, "/api/v1/authorized-signers", signers)
	})
	r.Group(func(r chi.Router) {
		r.Use(authenticate(nil), checkRequestID, requireJSON)
		person := handlePerson(s.reader, s.fresh, s.audit)
		r.Method(http.MethodGet, "/api/v1/persons/{person_id}", person)
		r.Method(http.MethodHead, "/api/v1/persons/{person_id}", person)
	})
	return r
}

func handleRouteNotFound() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, probRouteNotFound, "No operation is defined at this path.", nil)
	}
}

// handleMethodNotAllowed answers 405 for a path that exists, labelling
// the request with the path's route pattern, found in routes. chi calls
// it also for a method it does not know at all (PROPFIND, FOO1) on any
// path: for a path no route matches, it answers 404 route-not-found
// instead, as for any other method.
func handleMethodNotAllowed(routes chi.Routes) http.HandlerFunc {
	notFound := handleRouteNotFound()
	return func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		if r.URL.RawPath != "" {
			path = r.URL.RawPath
		}
		// Every route answers GET, so GET finds the pattern.
		pattern := routes.Find(chi.NewRouteContext(), http.MethodGet, path)
		if pattern == "" {
			notFound(w, r)
			return
		}
		if info := infoFrom(r.Context()); info != nil {
			info.route = pattern
		}
		w.Header()["Allow"] = hdrAllow
		writeProblem(w, r, probMethodNotAllowed, "This path answers GET and HEAD only.", nil)
	}
}

// serverOptionsRoute is the route label of OPTIONS *.
const serverOptionsRoute = "*"

// answerServerOptions answers OPTIONS * (RFC 9110 section 9.3.7: a request
// about the server rather than a resource) with 200, the methods every
// route answers in Allow, no content, and the headers of every answer.
// net/http answers it itself unless the http.Server sets
// DisableGeneralOptionsHandler, as lookupd's do. Any other method on *
// finds no route (404).
func answerServerOptions(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions || r.RequestURI != "*" {
			next.ServeHTTP(w, r)
			return
		}
		if info := infoFrom(r.Context()); info != nil {
			info.route = serverOptionsRoute
		}
		h := w.Header()
		h["Allow"] = hdrAllow
		h["Content-Length"] = hdrZero
		w.WriteHeader(http.StatusOK)
	})
}

// Route returns the route pattern r would be served by (such as
// /api/v1/persons/{person_id}), "" for a path no route matches: a name for
// the request that holds no identifier, for traces.
func (s *Server) Route(r *http.Request) string {
	path := r.URL.Path
	if r.URL.RawPath != "" {
		path = r.URL.RawPath
	}
	return s.router.Find(chi.NewRouteContext(), http.MethodGet, path)
}
