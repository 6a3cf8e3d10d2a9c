package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestAuthenticatorRequiresItsScope(t *testing.T) {
	a, err := NewAuthenticator(AuthenticatorConfig{Keys: testJWKS(t), Issuer: testIssuer, Audience: testAudience,
		Scope: "read:audit", TokenCacheSize: 10, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	var got Caller
	h := a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = CallerFrom(r.Context())
		w.WriteHeader(http.StatusNoContent)
	}))
	audit := withClaims("read:audit", func(c map[string]any) { c["azp"] = "auditor-app" })
	for _, tc := range []struct {
		name, token string
		want        int
		wantKind    problemKind
		challenge   string // in WWW-Authenticate
	}{
		{"scope", rsaToken(t, audit), http.StatusNoContent, 0, ""},
		{"scope again (cached)", rsaToken(t, audit), http.StatusNoContent, 0, ""},
		{"no token", "", http.StatusUnauthorized, probUnauthorized, `Bearer realm="lookup"`},
		{"bad token", tamper(rsaToken(t, audit), 40), http.StatusUnauthorized, probUnauthorized, `error="invalid_token"`},
		{"other audience", rsaToken(t, withClaims("read:audit", func(c map[string]any) { c["aud"] = "other" })),
			http.StatusUnauthorized, probUnauthorized, "audience"},
		{"API scope only", rsaToken(t, goodClaims("read:persons read:persons:ssn")), http.StatusForbidden, probInsufficientScope,
			`error="insufficient_scope", error_description="scope read:audit is required", scope="read:audit"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = Caller{}
			req := newRequest(http.MethodGet, "/fhir/AuditEvent", tc.token)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status = %d %s, want %d", rec.Code, rec.Body, tc.want)
			}
			if tc.want == http.StatusNoContent {
				if want := (Caller{Subject: "client-42", Client: "auditor-app"}); got != want {
					t.Errorf("CallerFrom = %+v, want %+v", got, want)
				}
				return
			}
			if p := decodeProblem(t, rec); p.Type != tc.wantKind.TypeURI() || p.Status != tc.want {
				t.Errorf("problem = %+v, want %s", p, tc.wantKind.TypeURI())
			}
			if c := rec.Header().Get("WWW-Authenticate"); !strings.Contains(c, tc.challenge) {
				t.Errorf("WWW-Authenticate = %q, want it to hold %q", c, tc.challenge)
			}
		})
	}
}

// TestAuthorizeDecidesAsRequire: Authorize admits and refuses what
// Require does, answering nothing.
func TestAuthorizeDecidesAsRequire(t *testing.T) {
	a, err := NewAuthenticator(AuthenticatorConfig{Keys: testJWKS(t), Issuer: testIssuer, Audience: testAudience,
		Scope: "read:audit", TokenCacheSize: 10, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	audit := withClaims("read:audit", func(c map[string]any) { c["azp"] = "auditor-app" })
	officer := Caller{Subject: "client-42", Client: "auditor-app"}
	for _, tc := range []struct {
		name, token string
		want        Caller
		wantErr     error // nil: admitted; errNoToken or ErrInsufficientScope exactly, or any other
	}{
		{"scope", rsaToken(t, audit), officer, nil},
		{"no token", "", Caller{}, errNoToken},
		{"bad token", tamper(rsaToken(t, audit), 40), Caller{}, errAny},
		{"other audience", rsaToken(t, withClaims("read:audit", func(c map[string]any) { c["aud"] = "other" })), Caller{}, errAny},
		{"API scope only", rsaToken(t, goodClaims("read:persons read:persons:ssn")), Caller{Subject: "client-42"}, ErrInsufficientScope},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := a.Authorize(newRequest(http.MethodGet, "/officer/person", tc.token))
			switch {
			case tc.wantErr == nil && err != nil, tc.wantErr != nil && err == nil:
				t.Fatalf("Authorize = %v, want %v", err, tc.wantErr)
			case tc.wantErr != nil && !errors.Is(tc.wantErr, errAny) && !errors.Is(err, tc.wantErr),
				errors.Is(tc.wantErr, errAny) && (errors.Is(err, errNoToken) || errors.Is(err, ErrInsufficientScope)):
				t.Fatalf("Authorize = %v, want %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("caller = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// errAny stands for any error but the two Authorize names.
var errAny = errors.New("any other error")

func TestNewAuthenticatorRefuses(t *testing.T) {
	keys := testJWKS(t)
	for _, tc := range []struct {
		name string
		cfg  AuthenticatorConfig
	}{
		{"no keys", AuthenticatorConfig{Scope: "read:audit"}},
		{"no scope", AuthenticatorConfig{Keys: keys}},
		{"two scopes", AuthenticatorConfig{Keys: keys, Scope: "read:audit read:persons"}},
		{"quote", AuthenticatorConfig{Keys: keys, Scope: `read:"audit`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if a, err := NewAuthenticator(tc.cfg); err == nil {
				t.Errorf("NewAuthenticator(%+v) = %v, nil; want an error", tc.cfg, a)
			}
		})
	}
	if _, ok := CallerFrom(t.Context()); ok {
		t.Error("CallerFrom of a bare context = true, want false")
	}
}
