package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestAuthenticatorAnswersAsTheAPI: the 401 problems an Authenticator
// writes are byte for byte the API's (query's), body, Content-Type and
// WWW-Authenticate alike, and so is the 403 problem's form.
func TestAuthenticatorAnswersAsTheAPI(t *testing.T) {
	api := newTestServer(t, fixtureReader(), "")
	a, err := NewAuthenticator(AuthenticatorConfig{Keys: testJWKS(t), Issuer: testIssuer, Audience: testAudience,
		Scope: "read:persons", Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	authn := a.Require(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	path := "/api/v1/persons/" + consumerA
	for _, tc := range []struct{ name, token string }{
		{"no token", ""},
		{"tampered token", tamper(rsaToken(t, goodClaims("read:persons")), 40)},
		{"expired token", rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["exp"] = testNow.Add(-time.Hour).Unix() }))},
		{"no read:persons", rsaToken(t, goodClaims("read:audit"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := httptest.NewRecorder()
			api.ServeHTTP(want, newRequest(http.MethodGet, path, tc.token))
			got := httptest.NewRecorder()
			authn.ServeHTTP(got, newRequest(http.MethodGet, path, tc.token))
			if got.Code != want.Code || got.Body.String() != want.Body.String() {
				t.Errorf("Authenticator: %d %s\nAPI:           %d %s", got.Code, got.Body, want.Code, want.Body)
			}
			for _, h := range []string{"WWW-Authenticate", "Content-Type", "Content-Length"} {
				if g, w := got.Header().Get(h), want.Header().Get(h); g != w {
					t.Errorf("%s = %q, the API's %q", h, g, w)
				}
			}
		})
	}
}
