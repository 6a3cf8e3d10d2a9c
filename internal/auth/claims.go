package auth

import (
	"bytes"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// tokenTimes are the time claims of a token, in whole seconds since the
// epoch (a fraction is dropped, as jwx does), each with whether it is there.
type tokenTimes struct {
	exp, nbf, iat          int64
	hasExp, hasNbf, hasIat bool
}

// check applies the time rules to t at now with clockSkew, in the order
// jwx applied them before (iat, exp, nbf, then a missing exp): the one
// check of both a fresh verification and a cached one.
func (t tokenTimes) check(now time.Time) error {
	if t.hasIat && now.Before(time.Unix(t.iat, 0).Add(-clockSkew)) {
		return errTokenIssuedFuture
	}
	if t.hasExp && !now.Before(time.Unix(t.exp, 0).Add(clockSkew)) {
		return errTokenExpired
	}
	if t.hasNbf && now.Before(time.Unix(t.nbf, 0).Add(-clockSkew)) {
		return errTokenNotYetValid
	}
	if !t.hasExp {
		return errTokenMissingExp
	}
	return nil
}

// tokenClaims are the claims of a token the API reads, taken in one pass
// over its payload.
type tokenClaims struct {
	times   tokenTimes
	iss     string
	hasIss  bool
	aud     []string
	sub     string
	client  string   // azp, else client_id (read leniently: for the audit ledger)
	azp     bool     // client came from azp
	scope   []string // from "scope"
	scp     []string // from "scp"
	granted []string // from the other claims that grant scopes (claimNames.scopes)
	tenants []string
	tenancy tenancyClaim
}

// claimNames are the claims of a deployment's choosing: the tenancy claim
// ("" for none) and the claims that grant scopes (nil: scope and scp).
type claimNames struct {
	tenant string
	scopes []string
}

// grants reports whether the claim name grants scopes.
func (n claimNames) grants(name string) bool {
	if n.scopes == nil {
		return name == "scope" || name == "scp"
	}
	return slices.Contains(n.scopes, name)
}

// readClaims reads the claims of a verified payload in one pass. The
// registered claims must have their RFC 7519 types (exp, nbf and iat JSON
// numbers; iss, sub and jti strings; aud a string or an array of strings);
// the claims that grant scopes and the tenancy claim (names) are read
// leniently: a wrong shape grants nothing. Names must be unique (RFC 7519
// section 4).
func readClaims(payload []byte, names claimNames) (tokenClaims, error) {
	var c tokenClaims
	dec := jsontext.NewDecoder(bytes.NewReader(payload))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != jsontext.KindBeginObject {
		return c, errTokenSignature
	}
	for dec.PeekKind() == jsontext.KindString {
		nameTok, err := dec.ReadToken()
		if err != nil {
			return c, errTokenSignature
		}
		name := nameTok.String()
		if !wantedClaim(name, names) {
			if dec.SkipValue() != nil {
				return c, errTokenSignature
			}
			continue
		}
		raw, err := dec.ReadValue()
		if err != nil {
			return c, errTokenSignature
		}
		if err := c.take(name, raw, names); err != nil {
			return c, err
		}
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != jsontext.KindEndObject {
		return c, errTokenSignature
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return c, errTokenSignature
	}
	return c, nil
}

func wantedClaim(name string, names claimNames) bool {
	switch name {
	case "exp", "nbf", "iat", "iss", "sub", "aud", "jti", "azp", "client_id":
		return true
	}
	return names.tenant != "" && name == names.tenant || names.grants(name)
}

// take records the claim name with the JSON value raw.
func (c *tokenClaims) take(name string, raw jsontext.Value, names claimNames) error {
	if names.tenant != "" && name == names.tenant {
		c.tenants, c.tenancy = tenantsOf(raw)
	}
	if names.grants(name) {
		switch name {
		case "scope":
			c.scope = scopeClaim(raw)
		case "scp":
			c.scp = scpClaim(raw)
		default: // a string of scopes or an array of strings, as scp
			c.granted = append(c.granted, scpClaim(raw)...)
		}
	}
	var err error
	switch name {
	case "exp":
		c.times.exp, err = numericDate(raw)
		c.times.hasExp = true
	case "nbf":
		c.times.nbf, err = numericDate(raw)
		c.times.hasNbf = true
	case "iat":
		c.times.iat, err = numericDate(raw)
		c.times.hasIat = true
	case "iss":
		c.iss, err = stringClaim(raw)
		c.hasIss = true
	case "sub":
		c.sub, err = stringClaim(raw)
	case "jti":
		_, err = stringClaim(raw)
	case "aud":
		c.aud, err = audienceClaim(raw)
	case "azp":
		if v, verr := stringClaim(raw); verr == nil && v != "" {
			c.client, c.azp = v, true
		}
	case "client_id":
		if v, verr := stringClaim(raw); verr == nil && v != "" && !c.azp {
			c.client = v
		}
	}
	return err
}

// numericDate reads an RFC 7519 NumericDate: a JSON number. A string that
// jwx would have read as a date (digits, or RFC 3339) is errTokenTimeClaim;
// any other value is errTokenSignature.
func numericDate(raw jsontext.Value) (int64, error) {
	switch raw.Kind() {
	case jsontext.KindNumber:
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || math.Abs(f) >= math.MaxInt64 {
			return 0, errTokenSignature
		}
		return int64(f), nil
	case jsontext.KindString:
		s, err := stringClaim(raw)
		if err == nil && looksLikeDate(s) {
			return 0, errTokenTimeClaim
		}
	}
	return 0, errTokenSignature
}

// looksLikeDate reports whether s is digits and periods, or RFC 3339.
func looksLikeDate(s string) bool {
	if s != "" && strings.Trim(s, "0123456789.") == "" {
		return true
	}
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

func stringClaim(raw jsontext.Value) (string, error) {
	if raw.Kind() != jsontext.KindString {
		return "", errTokenSignature
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", errTokenSignature
	}
	return s, nil
}

// audienceClaim reads aud: a string or an array of strings.
func audienceClaim(raw jsontext.Value) ([]string, error) {
	if raw.Kind() == jsontext.KindString {
		s, err := stringClaim(raw)
		return []string{s}, err
	}
	var list []string
	if raw.Kind() != jsontext.KindBeginArray || json.Unmarshal(raw, &list) != nil {
		return nil, errTokenSignature
	}
	return list, nil
}

// anyOf decodes raw generically (numbers as float64), nil if it cannot.
func anyOf(raw jsontext.Value) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	return v
}

// scopeClaim reads the scope claim (RFC 8693 section 4.2, RFC 6749
// section 3.3): a JSON string of scope tokens separated by single spaces.
// Any other shape grants nothing.
func scopeClaim(raw jsontext.Value) []string {
	if s, ok := anyOf(raw).(string); ok {
		return splitScopes(s)
	}
	return nil
}

// scpClaim reads the scp claim: a string of scope tokens separated by
// single spaces, or an array of strings. Any other shape (including an
// array holding a non-string) grants nothing.
func scpClaim(raw jsontext.Value) []string {
	switch x := anyOf(raw).(type) {
	case string:
		return splitScopes(x)
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

// splitScopes splits a scope string on single space characters (RFC 6749
// section 3.3): a tab or other white space is part of a token.
func splitScopes(s string) []string {
	parts := strings.Split(s, " ")
	out := parts[:0]
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// tenantsOf returns the lower-cased business ids of a tenancy claim's
// value and its state: tenancyMalformed (and no ids) when it is not a JSON
// array of strings.
func tenantsOf(raw jsontext.Value) ([]string, tenancyClaim) {
	list, ok := anyOf(raw).([]any)
	if !ok {
		return nil, tenancyMalformed
	}
	ids := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, tenancyMalformed
		}
		ids = append(ids, strings.ToLower(s))
	}
	return ids, tenancyValid
}
