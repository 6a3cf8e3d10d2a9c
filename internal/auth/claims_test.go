package auth

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// TestReadClaims: the one pass over the payload reads what the API uses
// and refuses what jwx refused, plus duplicate names and trailing data.
func TestReadClaims(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		tenant  string
		wantErr error
		check   func(t *testing.T, c tokenClaims)
	}{
		{name: "all claims", tenant: "biz",
			payload: `{"iss":"i","sub":"s","aud":["a","b"],"exp":2000000000.9,"nbf":1,"iat":-1.5,"jti":"j","scope":"x  y","scp":["z"],"biz":["AB"],"other":{"deep":[1,2]}}`,
			check: func(t *testing.T, c tokenClaims) {
				want := tokenTimes{exp: 2000000000, nbf: 1, iat: -1, hasExp: true, hasNbf: true, hasIat: true}
				if c.times != want {
					t.Errorf("times = %+v, want %+v", c.times, want)
				}
				if c.iss != "i" || !c.hasIss || c.sub != "s" || !slices.Equal(c.aud, []string{"a", "b"}) {
					t.Errorf("iss, sub, aud = %q %v %q %v", c.iss, c.hasIss, c.sub, c.aud)
				}
				if !slices.Equal(c.scope, []string{"x", "y"}) || !slices.Equal(c.scp, []string{"z"}) {
					t.Errorf("scope, scp = %v, %v", c.scope, c.scp)
				}
				if c.tenancy != tenancyValid || !slices.Equal(c.tenants, []string{"ab"}) {
					t.Errorf("tenancy = %v %v", c.tenancy, c.tenants)
				}
			}},
		{name: "aud a string", payload: `{"aud":"a"}`, check: func(t *testing.T, c tokenClaims) {
			if !slices.Equal(c.aud, []string{"a"}) {
				t.Errorf("aud = %v", c.aud)
			}
		}},
		{name: "tenancy claim malformed", tenant: "biz", payload: `{"biz":"ab"}`, check: func(t *testing.T, c tokenClaims) {
			if c.tenancy != tenancyMalformed {
				t.Errorf("tenancy = %v, want malformed", c.tenancy)
			}
		}},
		{name: "tenancy claim absent", tenant: "biz", payload: `{"sub":"s"}`, check: func(t *testing.T, c tokenClaims) {
			if c.tenancy != tenancyAbsent {
				t.Errorf("tenancy = %v, want absent", c.tenancy)
			}
		}},
		{name: "exp a string of digits", payload: `{"exp":"2000000000"}`, wantErr: errTokenTimeClaim},
		{name: "iat an RFC 3339 string", payload: `{"iat":"2026-01-01T00:00:00Z"}`, wantErr: errTokenTimeClaim},
		{name: "nbf other text", payload: `{"nbf":"soon"}`, wantErr: errTokenSignature},
		{name: "exp null", payload: `{"exp":null}`, wantErr: errTokenSignature},
		{name: "exp beyond int64", payload: `{"exp":1e300}`, wantErr: errTokenSignature},
		{name: "iss a number", payload: `{"iss":7}`, wantErr: errTokenSignature},
		{name: "sub an array", payload: `{"sub":["s"]}`, wantErr: errTokenSignature},
		{name: "jti a number", payload: `{"jti":7}`, wantErr: errTokenSignature},
		{name: "aud holding a number", payload: `{"aud":["a",7]}`, wantErr: errTokenSignature},
		{name: "duplicate claim", payload: `{"exp":1,"exp":2000000000}`, wantErr: errTokenSignature},
		{name: "duplicate unread claim", payload: `{"x":1,"x":2}`, wantErr: errTokenSignature},
		{name: "not an object", payload: `["exp"]`, wantErr: errTokenSignature},
		{name: "trailing data", payload: `{"sub":"s"} {}`, wantErr: errTokenSignature},
		{name: "truncated", payload: `{"sub":"s"`, wantErr: errTokenSignature},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := readClaims([]byte(tc.payload), claimNames{tenant: tc.tenant})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("readClaims error = %v, want %v", err, tc.wantErr)
			}
			if tc.check != nil {
				tc.check(t, c)
			}
		})
	}
}

// TestTokenTimesCheck: the rules shared by fresh and cached verification,
// at the edges of the skew.
func TestTokenTimesCheck(t *testing.T) {
	now := testNow
	sec := func(d time.Duration) int64 { return now.Add(d).Unix() }
	tests := []struct {
		name  string
		times tokenTimes
		want  error
	}{
		{"valid", tokenTimes{exp: sec(time.Hour), hasExp: true}, nil},
		{"expired within skew", tokenTimes{exp: sec(-clockSkew + time.Second), hasExp: true}, nil},
		{"expired at the skew", tokenTimes{exp: sec(-clockSkew), hasExp: true}, errTokenExpired},
		{"nbf within skew", tokenTimes{exp: sec(time.Hour), hasExp: true, nbf: sec(clockSkew), hasNbf: true}, nil},
		{"nbf past the skew", tokenTimes{exp: sec(time.Hour), hasExp: true, nbf: sec(clockSkew + time.Second), hasNbf: true}, errTokenNotYetValid},
		{"iat past the skew", tokenTimes{exp: sec(time.Hour), hasExp: true, iat: sec(clockSkew + time.Second), hasIat: true}, errTokenIssuedFuture},
		{"iat checked before exp", tokenTimes{exp: sec(-time.Hour), hasExp: true, iat: sec(time.Hour), hasIat: true}, errTokenIssuedFuture},
		{"no exp", tokenTimes{}, errTokenMissingExp},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.times.check(now); !errors.Is(err, tc.want) {
				t.Errorf("check = %v, want %v", err, tc.want)
			}
		})
	}
}
