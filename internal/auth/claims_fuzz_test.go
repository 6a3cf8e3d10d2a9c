package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwt"
)

// jwxJudge is how verification judged a payload's claims before the one
// pass: jwx's parse and validation, then a second decode refusing time
// claims written as strings.
func jwxJudge(payload []byte) (subject string, err error) {
	compact := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none"}`)) + "." +
		base64.RawURLEncoding.EncodeToString(payload) + "."
	tok, err := jwt.ParseInsecure([]byte(compact))
	if err != nil {
		return "", err
	}
	err = jwt.Validate(tok, jwt.WithAcceptableSkew(clockSkew), jwt.WithClock(jwt.ClockFunc(func() time.Time { return testNow })),
		jwt.WithRequiredClaim(jwt.ExpirationKey), jwt.WithIssuer(testIssuer), jwt.WithAudience(testAudience))
	if err != nil {
		return "", err
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil {
		return "", err
	}
	for _, name := range [...]string{"exp", "nbf", "iat"} {
		if v, ok := claims[name]; ok && (len(v) == 0 || v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
			return "", errors.New("time claim not a number")
		}
	}
	subject, _ = tok.Subject()
	return subject, nil
}

// onePassJudge is the verifier's judgement of the claims today.
func onePassJudge(payload []byte) (string, error) {
	c, err := readClaims(payload, claimNames{})
	if err != nil {
		return "", err
	}
	v := tokenRules{issuer: testIssuer, audience: testAudience}
	if err := c.times.check(testNow); err != nil {
		return "", err
	}
	if !c.hasIss || c.iss != v.issuer {
		return "", errTokenIssuer
	}
	for _, a := range c.aud {
		if a == v.audience {
			return c.sub, nil
		}
	}
	return "", errTokenAudience
}

// FuzzClaimsNoWeaker: the one-pass claim reader accepts no payload that
// jwx (with the string time claim check) refused, and reads the same
// subject. It may refuse more (duplicate names, trailing data).
func FuzzClaimsNoWeaker(f *testing.F) {
	for _, c := range []map[string]any{
		goodClaims("read:persons"),
		withClaims("read:persons", func(c map[string]any) { c["exp"] = "2099-01-01T00:00:00Z" }),
		withClaims("read:persons", func(c map[string]any) { c["aud"] = []any{"x", testAudience} }),
		withClaims("read:persons", func(c map[string]any) { c["exp"] = float64(testNow.Unix()) + 29.9 }),
		withClaims("read:persons", func(c map[string]any) { delete(c, "exp") }),
		withClaims("read:persons", func(c map[string]any) { c["iss"] = 7 }),
	} {
		b, err := json.Marshal(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"iss":"https://issuer.test","aud":"lookup-api","exp":1800000000,"exp":1}`))
	f.Add([]byte(`{"iss":"https://issuer.test","aud":"lookup-api","exp":1.8e9,"sub":"\u00e9"}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		newSub, newErr := onePassJudge(payload)
		if newErr != nil {
			return
		}
		oldSub, oldErr := jwxJudge(payload)
		if oldErr != nil {
			t.Fatalf("accepted %q, which jwx refused: %v", payload, oldErr)
		}
		if newSub != oldSub {
			t.Fatalf("subject of %q = %q, jwx read %q", payload, newSub, oldSub)
		}
	})
}
