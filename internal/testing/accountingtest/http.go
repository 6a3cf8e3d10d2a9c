package accountingtest

import (
	"errors"
	"net/http"
	"net/http/httptest"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/auth"
)

// Authorize admits a request as auth.Authenticator would, by its bearer
// token: "auditor" (subject auditor) and "officer" (subject officer of
// the client privacy-desk) may read the accounting, "reader" is known
// but lacks the scope (accounting.ErrForbidden, a 403), anything else is
// no token (a 401).
func Authorize(r *http.Request) (auth.Caller, error) {
	switch r.Header.Get("Authorization") {
	case "Bearer auditor":
		return auth.Caller{Subject: "auditor"}, nil
	case "Bearer officer":
		return auth.Caller{Subject: "officer", Client: "privacy-desk"}, nil
	case "Bearer reader":
		return auth.Caller{}, accounting.ErrForbidden
	}
	return auth.Caller{}, errors.New("no token")
}

// Get answers GET target on h with the bearer token (none when "").
func Get(h http.Handler, target, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
