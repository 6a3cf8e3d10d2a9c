package query

import (
	"net/http/httptest"
	"testing"
)

func TestRoute(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	for path, want := range map[string]string{
		"/api/v1/persons/" + consumerA:                        "/api/v1/persons/{person_id}",
		"/api/v1/authorized-signers?consumer_id=" + consumerA: "/api/v1/authorized-signers",
		"/api/v1/nothing":                                     "",
	} {
		if got := s.Route(httptest.NewRequest("GET", path, nil)); got != want {
			t.Errorf("Route(%s) = %q, want %q", path, got, want)
		}
	}
}
