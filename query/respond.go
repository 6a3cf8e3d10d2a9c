package query

import (
	"net/http"
	"strconv"
)

// Header values set on every answer or on many, shared so that setting
// them allocates nothing. They are assigned to http.Header maps as they
// are (h[key] = value, canonical keys), and never modified: net/http and
// http.Header's methods replace or copy a value, never write into it.
var (
	hdrNoStore     = []string{"no-store"}
	hdrNoSniff     = []string{"nosniff"}
	hdrJSON        = []string{"application/json"}
	hdrProblemJSON = []string{"application/problem+json"}
	hdrYAML        = []string{"application/yaml"}
	hdrAllow       = []string{allowedMethods}
	hdrZero        = []string{"0"}
)

// setCommonHeaders sets the fixed headers every answer carries:
// Cache-Control: no-store and X-Content-Type-Options: nosniff.
func setCommonHeaders(h http.Header) {
	h["Cache-Control"] = hdrNoStore
	h["X-Content-Type-Options"] = hdrNoSniff
}

// writeBody writes body with its Content-Type and Content-Length; for HEAD
// only the headers are written.
func writeBody(w http.ResponseWriter, r *http.Request, status int, contentType []string, body []byte) {
	h := w.Header()
	h["Content-Type"] = contentType
	if info := infoFrom(r.Context()); info != nil {
		info.contentLength[0] = strconv.Itoa(len(body))
		h["Content-Length"] = info.contentLength[:]
	} else {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) //nolint:gosec // G705: body is JSON we encoded, served with its own Content-Type
	}
}
