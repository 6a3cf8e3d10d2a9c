package auth

import (
	"crypto/x509"
	"encoding/pem"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tamper flips one bit of the character at index i of s (staying within
// the base64url alphabet).
func tamper(s string, i int) string {
	b := []byte(s)
	if b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

func withClaims(scope string, edit func(map[string]any)) map[string]any {
	c := goodClaims(scope)
	edit(c)
	return c
}

func TestTokenAttacks(t *testing.T) {
	testKeys(t)
	s := newTestServer(t, fixtureReader(), "")
	rsaHdr := map[string]any{"alg": "RS256", "typ": "JWT", "kid": testKID}
	valid := rsaToken(t, goodClaims("read:persons"))
	pubDER, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER})
	parts := strings.Split(valid, ".")

	const noError = "no-error" // 401 without an error attribute
	tests := []struct {
		name    string
		header  []string // Authorization header values
		want    int
		desc    string // expected error_description of a 401 with a token; noError for none
		errCode string // expected error of a 401 with a token; "" = invalid_token
	}{
		{name: "valid", header: []string{"Bearer " + valid}, want: 200},
		{name: "scheme lower case", header: []string{"bearer " + valid}, want: 200},
		{name: "scheme upper case", header: []string{"BEARER " + valid}, want: 200},
		{name: "scheme mixed case", header: []string{"bEaReR " + valid}, want: 200},
		{name: "no header", want: 401, desc: noError},
		{name: "basic scheme", header: []string{"Basic dXNlcjpwYXNz"}, want: 401, desc: noError},
		{name: "token without scheme", header: []string{valid}, want: 401, desc: noError},
		{name: "scheme without token", header: []string{"Bearer"}, want: 401, desc: errTokenEmpty.Error(), errCode: "invalid_request"},
		{name: "scheme with empty token", header: []string{"Bearer "}, want: 401, desc: errTokenEmpty.Error(), errCode: "invalid_request"},
		{name: "scheme with blank token", header: []string{"Bearer    "}, want: 401, desc: errTokenEmpty.Error(), errCode: "invalid_request"},
		{name: "two headers", header: []string{"Bearer " + valid, "Bearer " + valid}, want: 401, desc: errTokenHeaders.Error(), errCode: "invalid_request"}, // RFC 6750 section 3.1
		{name: "garbage", header: []string{"Bearer garbage"}, want: 401, desc: errTokenMalformed.Error()},
		{name: "garbage with dots", header: []string{"Bearer a.b.c"}, want: 401, desc: errTokenSignature.Error()},
		{name: "two parts", header: []string{"Bearer " + parts[0] + "." + parts[1]}, want: 401, desc: errTokenMalformed.Error()},
		{name: "JSON serialization", header: []string{`Bearer {"payload":"` + parts[1] + `","signatures":[]}`}, want: 401, desc: errTokenMalformed.Error()},
		{name: "too large", header: []string{"Bearer " + parts[0] + "." + strings.Repeat("A", maxTokenBytes) + "." + parts[2]}, want: 401, desc: errTokenTooLarge.Error()},
		{name: "alg none, empty signature", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "none", "kid": testKID}, goodClaims("read:persons"), "none", nil)},
			want: 401, desc: errTokenMalformed.Error()},
		{name: "alg none with a signature", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "none", "kid": testKID}, goodClaims("read:persons"), "none", nil) + "AAAA"},
			want: 401, desc: errTokenAlg.Error()},
		{name: "alg None", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "None", "kid": testKID}, goodClaims("read:persons"), "none", nil) + "AAAA"},
			want: 401, desc: errTokenSignature.Error()}, // jwx refuses the unknown alg name while parsing
		{name: "alg HS256 with the kid of the RSA key, signed by RSA", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "HS256", "kid": testKID}, goodClaims("read:persons"), "RS256", rsaKey)},
			want: 401, desc: errTokenAlg.Error()},
		{name: "no alg", header: []string{"Bearer " + signToken(t, map[string]any{"kid": testKID}, goodClaims("read:persons"), "RS256", rsaKey)},
			want: 401, desc: errTokenAlg.Error()},
		{name: "HS256 keyed with the RSA public key PEM", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "HS256", "kid": testKID}, goodClaims("read:persons"), "HS256", pubPEM)},
			want: 401, desc: errTokenAlg.Error()},
		{name: "HS256 keyed with the RSA public key DER", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "HS256", "kid": testKID}, goodClaims("read:persons"), "HS256", pubDER)},
			want: 401, desc: errTokenAlg.Error()},
		{name: "PS256 against an RS256 key", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "PS256", "kid": testKID}, goodClaims("read:persons"), "PS256", rsaKey)},
			want: 401, desc: errTokenKey.Error()},
		{name: "RS512 against an RS256 key", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "RS512", "kid": testKID}, goodClaims("read:persons"), "RS512", rsaKey)},
			want: 401, desc: errTokenKey.Error()},
		{name: "ES256 naming the RSA key", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "ES256", "kid": testKID}, goodClaims("read:persons"), "ES256", ecKey)},
			want: 401, desc: errTokenKey.Error()},
		{name: "ES256 with the EC key (no alg in JWK)", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "ES256", "kid": testECKID}, goodClaims("read:persons"), "ES256", ecKey)},
			want: 200},
		{name: "EdDSA with the Ed25519 key (no alg in JWK)", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "EdDSA", "kid": testEdKID}, goodClaims("read:persons"), "EdDSA", edKey)},
			want: 200},
		{name: "EdDSA naming the EC key", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "EdDSA", "kid": testECKID}, goodClaims("read:persons"), "EdDSA", edKey)},
			want: 401, desc: errTokenKey.Error()},
		{name: "no kid, signed by a known key", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "RS256"}, goodClaims("read:persons"), "RS256", rsaKey)},
			want: 200},
		{name: "no kid, signed by an unknown key", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "RS256"}, goodClaims("read:persons"), "RS256", rsaKey2)},
			want: 401, desc: errTokenSignature.Error()},
		{name: "unknown kid", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "RS256", "kid": "rsa-9"}, goodClaims("read:persons"), "RS256", rsaKey)},
			want: 401, desc: errTokenKey.Error()},
		{name: "known kid, other key", header: []string{"Bearer " + signToken(t, rsaHdr, goodClaims("read:persons"), "RS256", rsaKey2)},
			want: 401, desc: errTokenSignature.Error()},
		{name: "flipped signature byte", header: []string{"Bearer " + tamper(valid, len(valid)-10)}, want: 401, desc: errTokenSignature.Error()},
		{name: "flipped claims byte", header: []string{"Bearer " + tamper(valid, len(parts[0])+5)}, want: 401, desc: errTokenSignature.Error()},
		{name: "unknown crit header", header: []string{"Bearer " + signToken(t, map[string]any{"alg": "RS256", "kid": testKID, "crit": []string{"x-must"}, "x-must": 1}, goodClaims("read:persons"), "RS256", rsaKey)},
			want: 401, desc: errTokenCrit.Error()},
		{name: "expired", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["exp"] = testNow.Add(-time.Hour).Unix() }))},
			want: 401, desc: errTokenExpired.Error()},
		{name: "expired within skew", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["exp"] = testNow.Add(-10 * time.Second).Unix() }))},
			want: 200},
		{name: "expired just past skew", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["exp"] = testNow.Add(-clockSkew - time.Second).Unix() }))},
			want: 401, desc: errTokenExpired.Error()},
		{name: "nbf in the future", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["nbf"] = testNow.Add(time.Hour).Unix() }))},
			want: 401, desc: errTokenNotYetValid.Error()},
		{name: "nbf within skew", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["nbf"] = testNow.Add(10 * time.Second).Unix() }))},
			want: 200},
		{name: "iat in the future", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["iat"] = testNow.Add(time.Hour).Unix() }))},
			want: 401, desc: errTokenIssuedFuture.Error()},
		{name: "missing exp", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { delete(c, "exp") }))},
			want: 401, desc: errTokenMissingExp.Error()},
		{name: "exp not a number", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["exp"] = "tomorrow" }))},
			want: 401, desc: errTokenSignature.Error()},
		// jwx accepts these strings; RFC 7519 NumericDate is a JSON number.
		{name: "exp a string of digits", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) {
			c["exp"] = strconv.FormatInt(testNow.Add(time.Hour).Unix(), 10)
		}))}, want: 401, desc: errTokenTimeClaim.Error()},
		{name: "exp an RFC 3339 string", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) {
			c["exp"] = testNow.Add(time.Hour).Format(time.RFC3339)
		}))}, want: 401, desc: errTokenTimeClaim.Error()},
		{name: "nbf a string of digits", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) {
			c["nbf"] = strconv.FormatInt(testNow.Add(-time.Minute).Unix(), 10)
		}))}, want: 401, desc: errTokenTimeClaim.Error()},
		{name: "iat a string of digits", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) {
			c["iat"] = strconv.FormatInt(testNow.Add(-time.Minute).Unix(), 10)
		}))}, want: 401, desc: errTokenTimeClaim.Error()},
		{name: "exp with a fraction", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) {
			c["exp"] = float64(testNow.Add(time.Hour).Unix()) + 0.5
		}))}, want: 200},
		{name: "wrong iss", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["iss"] = "https://evil.test" }))},
			want: 401, desc: errTokenIssuer.Error()},
		{name: "missing iss", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { delete(c, "iss") }))},
			want: 401, desc: errTokenIssuer.Error()},
		{name: "wrong aud", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["aud"] = "other-api" }))},
			want: 401, desc: errTokenAudience.Error()},
		{name: "aud array holding ours", header: []string{"Bearer " + rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["aud"] = []string{"other-api", testAudience} }))},
			want: 200},
		{name: "missing scope", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { delete(c, "scope") }))}, want: 403},
		{name: "other scope", header: []string{"Bearer " + rsaToken(t, goodClaims("read:personsX write:persons"))}, want: 403},
		{name: "ssn scope alone", header: []string{"Bearer " + rsaToken(t, goodClaims("read:persons:ssn"))}, want: 403},
		{name: "scope among others", header: []string{"Bearer " + rsaToken(t, goodClaims("openid read:persons profile"))}, want: 200},
		{name: "scp string", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { delete(c, "scope"); c["scp"] = "read:persons" }))}, want: 200},
		{name: "scp array", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { delete(c, "scope"); c["scp"] = []string{"openid", "read:persons"} }))}, want: 200},
		{name: "scope as a number", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { c["scope"] = 7 }))}, want: 403},
		{name: "scope as an array", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { c["scope"] = []string{"read:persons"} }))}, want: 403},
		{name: "scope separated by a tab", header: []string{"Bearer " + rsaToken(t, goodClaims("openid\tread:persons"))}, want: 403},
		{name: "scope separated by a newline", header: []string{"Bearer " + rsaToken(t, goodClaims("read:persons\nopenid"))}, want: 403},
		{name: "scope with two spaces", header: []string{"Bearer " + rsaToken(t, goodClaims("openid  read:persons"))}, want: 200},
		{name: "scp string of several", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { delete(c, "scope"); c["scp"] = "openid read:persons" }))}, want: 200},
		{name: "scp array holding a non-string", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { delete(c, "scope"); c["scp"] = []any{"read:persons", 7} }))}, want: 403},
		{name: "scp an object", header: []string{"Bearer " + rsaToken(t, withClaims("", func(c map[string]any) { delete(c, "scope"); c["scp"] = map[string]any{"read:persons": true} }))}, want: 403},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, "")
			for _, h := range tc.header {
				req.Header.Add("Authorization", h)
			}
			rec := serve(t, s, req)
			checkCommonHeaders(t, rec.Result())
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.want, rec.Body)
			}
			challengeHdr := rec.Header().Get("WWW-Authenticate")
			switch tc.want {
			case 200:
				if challengeHdr != "" {
					t.Errorf("WWW-Authenticate = %q on a 200", challengeHdr)
				}
			case 401:
				checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probUnauthorized})
				want := `Bearer realm="lookup"`
				if tc.desc != noError {
					code := tc.errCode
					if code == "" {
						code = "invalid_token"
					}
					want += `, error="` + code + `", error_description="` + tc.desc + `"`
				}
				if challengeHdr != want {
					t.Errorf("WWW-Authenticate = %q, want %q", challengeHdr, want)
				}
			case 403:
				checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probInsufficientScope})
				want := `Bearer realm="lookup", error="insufficient_scope", error_description="scope read:persons is required", scope="read:persons"`
				if challengeHdr != want {
					t.Errorf("WWW-Authenticate = %q, want %q", challengeHdr, want)
				}
			}
		})
	}
}

func TestFullSSNNeedsScope(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	req := newRequest(http.MethodGet, "/api/v1/authorized-signers?consumer_id="+consumerA+"&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL",
		rsaToken(t, goodClaims("read:persons")))
	rec := serve(t, s, req)
	checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probInsufficientScope})
	want := `Bearer realm="lookup", error="insufficient_scope", error_description="scope read:persons:ssn is required for ssn_mode FULL", scope="read:persons read:persons:ssn"`
	if got := rec.Header().Get("WWW-Authenticate"); got != want {
		t.Errorf("WWW-Authenticate = %q, want %q", got, want)
	}
	if strings.Contains(rec.Body.String(), "6789") {
		t.Errorf("refused answer holds SSN digits: %s", rec.Body)
	}
}

// TestRSAKeyWithoutAlg: a key without alg verifies the RSA algorithms
// only, never HMAC or another key type's.
func TestRSAKeyWithoutAlg(t *testing.T) {
	testKeys(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwksJSON(t, publicJWK(t, rsaKey, "bare", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadJWKSFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(apiConfig{Reader: fixtureReader(), Keys: keys, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	pubDER, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	tests := []struct {
		alg  string
		key  any
		want int
	}{
		{"RS256", rsaKey, 200},
		{"RS512", rsaKey, 200},
		{"PS256", rsaKey, 200},
		{"HS256", pubDER, 401},
		{"ES256", ecKey, 401},
		{"EdDSA", edKey, 401},
	}
	for _, tc := range tests {
		t.Run(tc.alg, func(t *testing.T) {
			tok := signToken(t, map[string]any{"alg": tc.alg, "kid": "bare"}, goodClaims("read:persons"), tc.alg, tc.key)
			rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, tok))
			if rec.Code != tc.want {
				t.Errorf("status = %d, want %d; body %s", rec.Code, tc.want, rec.Body)
			}
		})
	}
}

// TestIssuerAudienceUnchecked: with no Issuer and Audience configured,
// any iss and aud are accepted.
func TestIssuerAudienceUnchecked(t *testing.T) {
	s, err := NewServer(apiConfig{Reader: fixtureReader(), Keys: testJWKS(t), Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	tok := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["iss"] = "anyone"; delete(c, "aud") }))
	rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, tok))
	if rec.Code != http.StatusOK {
		t.Errorf("status = %d, want 200; body %s", rec.Code, rec.Body)
	}
}

func TestTenancy(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "business_ids")
	tenantA := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = []string{businessA} }))
	tenantAUpper := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = []string{strings.ToUpper(businessA)} }))
	tenantBoth := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = []string{businessB, businessA} }))
	noClaim := rsaToken(t, goodClaims("read:persons"))
	stringClaim := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = businessA }))
	emptyClaim := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = []string{} }))
	objectClaim := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = map[string]any{"id": businessA} }))
	const (
		noClaimDetail   = "The token carries no tenancy claim."
		malformedDetail = "The token's tenancy claim is malformed: it must be an array of business id strings."
	)
	mixedClaim := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = []any{businessA, 7} }))
	signers := func(id string) string { return "/api/v1/authorized-signers?consumer_id=" + id }
	person := func(id string) string { return "/api/v1/persons/" + id }

	tests := []struct {
		name   string
		target string
		token  string
		want   int
		kind   problemKind
		detail string // the 403's detail, when set
	}{
		{"own person", person(consumerA), tenantA, 200, 0, ""},
		{"own contact", person(contactA), tenantA, 200, 0, ""},
		{"claim in upper case", person(consumerA), tenantAUpper, 200, 0, ""},
		{"two tenants", person(consumerB), tenantBoth, 200, 0, ""},
		{"own signers", signers(consumerA), tenantA, 200, 0, ""},
		{"another tenant's person", person(consumerB), tenantA, 403, probForbidden, ""},
		{"another tenant's signers", signers(consumerB), tenantA, 403, probForbidden, ""},
		{"another tenant's consumer without signers", signers(consumerBNone), tenantA, 403, probForbidden, ""},
		{"own consumer without signers is 404", signers(consumerNone), tenantA, 404, probNotFound, ""},
		{"any consumer without signers, both tenants", signers(consumerBNone), tenantBoth, 404, probNotFound, ""},
		{"unknown person is 404", person(consumerNo), tenantA, 404, probNotFound, ""},
		{"no claim", person(consumerA), noClaim, 403, probForbidden, noClaimDetail},
		{"no claim, signers", signers(consumerA), noClaim, 403, probForbidden, ""},
		{"no claim before parameters", person("bad-id"), noClaim, 403, probForbidden, ""},
		{"claim is a string", person(consumerA), stringClaim, 403, probForbidden, malformedDetail},
		{"claim is an object", person(consumerA), objectClaim, 403, probForbidden, malformedDetail},
		{"claim is empty", person(consumerA), emptyClaim, 403, probForbidden, ""},
		{"claim holds a non-string", person(consumerA), mixedClaim, 403, probForbidden, malformedDetail},
		{"claim holds a non-string, signers", signers(consumerA), mixedClaim, 403, probForbidden, malformedDetail},
		{"parameters before resource", person("bad-id"), tenantA, 400, probInvalidParams, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(http.MethodGet, tc.target, tc.token)
			rec := serve(t, s, req)
			if rec.Code != tc.want {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tc.want, rec.Body)
			}
			if tc.want == 200 {
				return
			}
			p := decodeProblem(t, rec)
			if p.Type != tc.kind.TypeURI() {
				t.Errorf("type = %q, want %q", p.Type, tc.kind.TypeURI())
			}
			if tc.detail != "" && p.Detail != tc.detail {
				t.Errorf("detail = %q, want %q", p.Detail, tc.detail)
			}
			if tc.kind == probForbidden && rec.Header().Get("WWW-Authenticate") != "" {
				t.Errorf("tenancy 403 carries WWW-Authenticate %q", rec.Header().Get("WWW-Authenticate"))
			}
		})
	}
}

// TestTenancyOffIgnoresClaim: without TenantClaim every business is visible.
func TestTenancyOffIgnoresClaim(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	tok := rsaToken(t, withClaims("read:persons", func(c map[string]any) { c["business_ids"] = []string{businessA} }))
	rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+consumerB, tok))
	if rec.Code != http.StatusOK {
		t.Errorf("status = %d, want 200", rec.Code)
	}
}
