package query

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// allowedMethods is the Allow header of every route: each answers GET and
// HEAD only.
const allowedMethods = "GET, HEAD"

// routes is the one place every route of the API is declared.
func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.observe)
	r.NotFound(handleRouteNotFound())
	r.MethodNotAllowed(handleMethodNotAllowed())

	r.Method(http.MethodGet, "/openapi.yaml", handleOpenAPI())
	r.Method(http.MethodHead, "/openapi.yaml", handleOpenAPI())

	r.Group(func(r chi.Router) {
		r.Use(requireJSON, s.authenticate)
		signers := handleSigners(s.reader)
		r.Method(http.MethodGet, "/api/v1/authorized-signers", signers)
		r.Method(http.MethodHead, "/api/v1/authorized-signers", signers)
		person := handlePerson(s.reader)
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

func handleMethodNotAllowed() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allowedMethods)
		writeProblem(w, r, probMethodNotAllowed, "This path answers GET and HEAD only.", nil)
	}
}
