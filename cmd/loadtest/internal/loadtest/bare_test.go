package loadtest

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeLookupd answers like lookupd: JSON bodies, its own headers, 401
// without a token.
func fakeLookupd(bodies map[string]string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		b, ok := bodies[r.URL.RequestURI()]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Request-Id", "req-1")
		_, _ = w.Write([]byte(b))
	})
}

func TestSameBody(t *testing.T) {
	const person, signers = "/api/v1/persons/p1", "/api/v1/authorized-signers?consumer_id=p1&expand=PROTECTED_PERSONAL_DATA"
	bodies := map[string]string{person: `{"person_id":"p1"}`, signers: `{"items":[{"ssn":"123456789"}]}`}
	lookupd := httptest.NewServer(fakeLookupd(bodies))
	defer lookupd.Close()
	same := httptest.NewServer(fakeLookupd(bodies))
	defer same.Close()
	c := lookupd.Client()
	for uri := range bodies {
		t.Run("same body "+strings.SplitN(uri, "?", 2)[0], func(t *testing.T) {
			if err := SameBody(c, same.URL, lookupd.URL, uri, "tok"); err != nil {
				t.Errorf("SameBody: %v", err)
			}
		})
	}
	t.Run("an unknown URI is an error", func(t *testing.T) {
		if err := SameBody(c, same.URL, lookupd.URL, "/api/v1/persons/other", "tok"); err == nil || !strings.Contains(err.Error(), "404") {
			t.Errorf("err = %v, want a 404", err)
		}
	})
	t.Run("different bodies are reported without their content", func(t *testing.T) {
		other := httptest.NewServer(fakeLookupd(map[string]string{signers: `{"items":[{"ssn":"123456780"}]}`}))
		defer other.Close()
		err := SameBody(c, same.URL, other.URL, signers, "tok")
		if err == nil {
			t.Fatal("SameBody = nil, want an error")
		}
		if !strings.Contains(err.Error(), "first difference at byte 26") || strings.Contains(err.Error(), "12345678") {
			t.Errorf("err = %q, want the offset 26 and no body content", err)
		}
	})
	t.Run("a refusal is an error", func(t *testing.T) {
		if err := SameBody(c, same.URL, lookupd.URL, person, ""); err == nil || !strings.Contains(err.Error(), "401") {
			t.Errorf("err = %v, want lookupd's 401", err)
		}
	})
}
