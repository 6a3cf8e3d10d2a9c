package auth

import (
	"net/http"
	"testing"
	"time"
)

// cognitoAccessToken is the payload of an Amazon Cognito user pool's
// access token for clientID, shaped as Cognito documents it: no aud, the
// app client in client_id, token_use "access", read:persons in scope.
func cognitoAccessToken(clientID string) map[string]any {
	return map[string]any{
		"sub": "aaaaaaaa-bbbb-cccc-dddd-example", "iss": testIssuer, "client_id": clientID,
		"origin_jti": "ab1cd2ef-3g4h-5i6j", "event_id": "d0f7b1c6-example", "token_use": "access",
		"scope": "read:persons", "auth_time": testNow.Add(-time.Minute).Unix(),
		"exp": testNow.Add(time.Hour).Unix(), "iat": testNow.Add(-time.Minute).Unix(),
		"jti": "0a1b2c3d-example", "username": "clerk", "version": 2,
	}
}

// entraAppToken is the payload of a Microsoft Entra ID v2.0 access token
// of an application (client credentials), shaped as Entra documents it:
// the API in aud, the caller (11111111-app) in azp, the application
// permissions in roles and no scp.
func entraAppToken(roles ...string) map[string]any {
	return map[string]any{
		"aud": testAudience, "iss": testIssuer, "iat": testNow.Add(-time.Minute).Unix(),
		"nbf": testNow.Add(-time.Minute).Unix(), "exp": testNow.Add(time.Hour).Unix(),
		"aio": "E2ZgYJh8example", "azp": "11111111-app", "azpacr": "1", "idtyp": "app",
		"oid": "a1b2c3d4-example", "rh": "0.ARoA-example", "roles": roles,
		"sub": "a1b2c3d4-example", "tid": "72f988bf-example", "uti": "example", "ver": "2.0",
	}
}

// TestIdentityProviderDialects: tokens shaped exactly as Amazon Cognito
// and Microsoft Entra ID document them are accepted with the documented
// settings (LOOKUP_ALLOWED_CLIENTS; LOOKUP_SCOPE_CLAIMS) and refused
// without them, or with another app client.
func TestIdentityProviderDialects(t *testing.T) {
	testKeys(t)
	path := "/api/v1/persons/" + consumerA
	for _, tc := range []struct {
		name   string
		cfg    apiConfig
		claims map[string]any
		want   int
	}{
		{"Cognito, its app client allowed", apiConfig{Clients: []string{"app-lookup"}},
			cognitoAccessToken("app-lookup"), http.StatusOK},
		{"Cognito, another app client of the pool", apiConfig{Clients: []string{"app-lookup"}},
			cognitoAccessToken("app-marketing"), http.StatusUnauthorized},
		{"Cognito, no client allowed but an audience required", apiConfig{Audience: testAudience},
			cognitoAccessToken("app-lookup"), http.StatusUnauthorized},
		{"Cognito, no audience nor clients (LOOKUP_ALLOW_NO_AUDIENCE, as before)", apiConfig{},
			cognitoAccessToken("app-marketing"), http.StatusOK},
		{"Entra, roles granting scopes", apiConfig{Audience: testAudience, ScopeClaims: []string{"scp", "roles"}},
			entraAppToken("read:persons"), http.StatusOK},
		{"Entra, roles and an allowed azp", apiConfig{Audience: testAudience, ScopeClaims: []string{"roles"}, Clients: []string{"11111111-app"}},
			entraAppToken("read:persons"), http.StatusOK},
		{"Entra, roles not read (the default claims)", apiConfig{Audience: testAudience},
			entraAppToken("read:persons"), http.StatusForbidden},
		{"Entra, another role", apiConfig{Audience: testAudience, ScopeClaims: []string{"roles"}},
			entraAppToken("write:persons"), http.StatusForbidden},
		{"Entra, scope no longer read once roles alone are named", apiConfig{Audience: testAudience, ScopeClaims: []string{"roles"}},
			withClaims("read:persons", func(map[string]any) {}), http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.Reader, cfg.Keys, cfg.Issuer, cfg.Now = fixtureReader(), testJWKS(t), testIssuer, func() time.Time { return testNow }
			s, err := NewServer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rec := serve(t, s, newRequest(http.MethodGet, path, rsaToken(t, tc.claims)))
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.want, rec.Body)
			}
			if tc.want == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("a 401 without WWW-Authenticate")
			}
		})
	}
}
