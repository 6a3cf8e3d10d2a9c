package query

import (
	_ "embed"
	"net/http"
)

// openAPIDoc is the OpenAPI 3.1 description of the API.
//
//go:embed openapi.yaml
var openAPIDoc []byte

// OpenAPI returns the OpenAPI 3.1 document describing the API.
func OpenAPI() []byte { return append([]byte(nil), openAPIDoc...) }

// handleOpenAPI serves the OpenAPI document, unauthenticated.
func handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeBody(w, r, http.StatusOK, hdrYAML, openAPIDoc)
	})
}
