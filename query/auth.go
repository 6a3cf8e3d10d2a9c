package query

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// The scopes the API knows (PRODUCT.md section 4).
const (
	scopeRead = "read:persons"
	scopeSSN  = "read:persons:ssn"
)

const (
	// clockSkew is the leeway allowed on exp, nbf and iat.
	clockSkew = 30 * time.Second
	// maxTokenBytes bounds the size of an accepted bearer token.
	maxTokenBytes = 8 << 10
	// realm is the RFC 6750 realm of every WWW-Authenticate challenge.
	realm = "lookup"
)

// acceptedAlgs are the only signature algorithms a token may use.
var acceptedAlgs = []jwa.SignatureAlgorithm{
	jwa.RS256(), jwa.RS384(), jwa.RS512(), jwa.PS256(),
	jwa.ES256(), jwa.ES384(), jwa.EdDSA(),
}

// tokenError is why a presented token was refused (a 401). Its text is a
// fixed phrase fit for an RFC 6750 error_description: it never holds any
// part of the token.
type tokenError string

func (e tokenError) Error() string { return string(e) }

// The reasons a token is refused.
const (
	errTokenMalformed    tokenError = "the token is not a compact JWS"
	errTokenTooLarge     tokenError = "the token is too large"
	errTokenAlg          tokenError = "the token algorithm is not accepted"
	errTokenKey          tokenError = "no key verifies the token"
	errTokenSignature    tokenError = "the token signature or claims are invalid"
	errTokenExpired      tokenError = "the token is expired"
	errTokenNotYetValid  tokenError = "the token is not valid yet"
	errTokenIssuedFuture tokenError = "the token was issued in the future"
	errTokenIssuer       tokenError = "the token issuer is not accepted"
	errTokenAudience     tokenError = "the token audience is not accepted"
	errTokenMissingExp   tokenError = "the token has no exp claim"
	errTokenHeaders      tokenError = "more than one Authorization header"
	errTokenCrit         tokenError = "the token names critical header extensions"
	errTokenTimeClaim    tokenError = "the token exp, nbf or iat claim is not a number"
	// errTokenEmpty is answered with error="invalid_request" (RFC 6750
	// section 3.1: the request lacks the token the scheme announces).
	errTokenEmpty tokenError = "the bearer token is empty"
)

// principal is what a verified token says about its bearer.
type principal struct {
	subject string
	client  string // azp, else client_id: recorded by the audit ledger
	scopes  []string
	// tenants are the lower-cased business ids of the tenancy claim;
	// tenancy says whether the claim is there and well-formed.
	tenants []string
	tenancy tenancyClaim
	// tenancyOn is true when the server checks tenancy.
	tenancyOn bool
}

func (p *principal) hasScope(s string) bool {
	for _, have := range p.scopes {
		if have == s {
			return true
		}
	}
	return false
}

// mayAccess reports whether the principal's tenancy claim holds businessID.
func (p *principal) mayAccess(businessID string) bool {
	businessID = strings.ToLower(businessID)
	for _, t := range p.tenants {
		if t == businessID {
			return true
		}
	}
	return false
}

// tenancyClaim is the state of a token's tenancy claim.
type tenancyClaim int

const (
	tenancyAbsent    tenancyClaim = iota // no such claim
	tenancyMalformed                     // not an array of strings
	tenancyValid                         // an array of business id strings
)

// tokenVerifier verifies bearer tokens.
type tokenVerifier struct {
	keys        *JWKS
	issuer      string
	audience    string
	tenantClaim string
	now         func() time.Time
	provider    jws.KeyProvider
}

func newTokenVerifier(keys *JWKS, issuer, audience, tenantClaim string, now func() time.Time) *tokenVerifier {
	v := &tokenVerifier{keys: keys, issuer: issuer, audience: audience, tenantClaim: tenantClaim, now: now}
	v.provider = jws.KeyProviderFunc(v.fetchKeys)
	return v
}

// fetchKeys hands jws the keys that may verify sig: only for an accepted
// algorithm, and only keys whose type (and own alg) allow it.
func (v *tokenVerifier) fetchKeys(ctx context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
	hdr := sig.ProtectedHeaders()
	if hdr == nil {
		return errTokenAlg
	}
	alg, ok := hdr.Algorithm()
	if !ok || !algAccepted(alg) {
		return errTokenAlg
	}
	// No header extension is understood, so RFC 7515 section 4.1.11
	// requires refusing any token that marks one critical.
	if hdr.Has("crit") {
		return errTokenCrit
	}
	kid, _ := hdr.KeyID()
	keys := v.keys.candidates(ctx, kid, alg)
	if len(keys) == 0 {
		return errTokenKey
	}
	for _, k := range keys {
		sink.Key(alg, k.key)
	}
	return nil
}

func algAccepted(alg jwa.SignatureAlgorithm) bool {
	for _, a := range acceptedAlgs {
		if a == alg {
			return true
		}
	}
	return false
}

// verify checks raw (a compact JWS) and returns its principal, or a
// tokenError saying why the token is refused.
func (v *tokenVerifier) verify(ctx context.Context, raw string) (*principal, error) {
	if len(raw) > maxTokenBytes {
		return nil, errTokenTooLarge
	}
	if !isCompactJWS(raw) {
		return nil, errTokenMalformed
	}
	opts := []jwt.ParseOption{
		jwt.WithKeyProvider(v.provider),
		jwt.WithContext(ctx),
		jwt.WithValidate(true),
		jwt.WithAcceptableSkew(clockSkew),
		jwt.WithClock(jwt.ClockFunc(v.now)),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
	}
	if v.issuer != "" {
		opts = append(opts, jwt.WithIssuer(v.issuer))
	}
	if v.audience != "" {
		opts = append(opts, jwt.WithAudience(v.audience))
	}
	tok, err := jwt.ParseString(raw, opts...)
	if err != nil {
		return nil, classifyTokenError(err)
	}
	// jwx also accepts exp, nbf and iat written as strings (digits, or
	// RFC 3339); RFC 7519 NumericDate is a JSON number only.
	if !timeClaimsAreNumbers(raw) {
		return nil, errTokenTimeClaim
	}
	p := &principal{}
	p.subject, _ = tok.Subject()
	p.client = clientClaim(tok.Get)
	p.scopes = append(p.scopes, scopeClaim(tok)...)
	p.scopes = append(p.scopes, scpClaim(tok)...)
	if v.tenantClaim != "" {
		p.tenancyOn = true
		p.tenants, p.tenancy = tenantsClaim(tok, v.tenantClaim)
	}
	return p, nil
}

// tenantsClaim returns the lower-cased business ids of tok's claim name
// and the claim's state: tenancyAbsent when tok has no such claim,
// tenancyMalformed (and no ids) when it is not a JSON array of strings.
func tenantsClaim(tok jwt.Token, name string) ([]string, tenancyClaim) {
	if !tok.Has(name) {
		return nil, tenancyAbsent
	}
	var val any
	if tok.Get(name, &val) != nil {
		return nil, tenancyMalformed
	}
	list, ok := val.([]any)
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

// classifyTokenError maps a jwx error to a fixed reason.
func classifyTokenError(err error) error {
	var te tokenError
	switch {
	case errors.As(err, &te):
		return te
	case errors.Is(err, jwt.TokenExpiredError()):
		return errTokenExpired
	case errors.Is(err, jwt.TokenNotYetValidError()):
		return errTokenNotYetValid
	case errors.Is(err, jwt.InvalidIssuedAtError()):
		return errTokenIssuedFuture
	case errors.Is(err, jwt.InvalidIssuerError()):
		return errTokenIssuer
	case errors.Is(err, jwt.InvalidAudienceError()):
		return errTokenAudience
	case errors.Is(err, jwt.MissingRequiredClaimError()):
		return errTokenMissingExp
	}
	return errTokenSignature
}

// scopeClaim reads the scope claim (RFC 8693 section 4.2, RFC 6749
// section 3.3): a JSON string of scope tokens separated by single spaces.
// Any other shape grants nothing.
func scopeClaim(tok jwt.Token) []string {
	var val any
	if tok.Get("scope", &val) != nil {
		return nil
	}
	if s, ok := val.(string); ok {
		return splitScopes(s)
	}
	return nil
}

// scpClaim reads the scp claim: a string of scope tokens separated by
// single spaces, or an array of strings. Any other shape (including an
// array holding a non-string) grants nothing.
func scpClaim(tok jwt.Token) []string {
	var val any
	if tok.Get("scp", &val) != nil {
		return nil
	}
	switch x := val.(type) {
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
	case []string:
		return x
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

// timeClaimsAreNumbers reports whether the exp, nbf and iat claims of the
// compact JWS raw, where present, are JSON numbers (RFC 7519 NumericDate).
// raw has already been parsed and verified, so its payload decodes.
func timeClaimsAreNumbers(raw string) bool {
	first := strings.IndexByte(raw, '.')
	last := strings.LastIndexByte(raw, '.')
	payload, err := base64.RawURLEncoding.DecodeString(raw[first+1 : last])
	if err != nil {
		return false
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil {
		return false
	}
	for _, name := range [...]string{"exp", "nbf", "iat"} {
		v, ok := claims[name]
		if !ok {
			continue
		}
		if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
			return false
		}
	}
	return true
}

// isCompactJWS reports whether s has the form of a compact JWS with three
// non-empty base64url parts.
func isCompactJWS(s string) bool {
	parts := 0
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
			if n == 0 {
				return false
			}
			parts++
			n = 0
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			n++
		default:
			return false
		}
	}
	return parts == 2 && n > 0
}

// bearerToken extracts the token of an "Authorization: Bearer" header. It
// returns present=false when no bearer credentials were sent (no header,
// or another scheme), and a tokenError when the header is unusable.
func bearerToken(r *http.Request) (token string, present bool, err error) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", false, nil
	}
	if len(vals) > 1 {
		return "", true, errTokenHeaders
	}
	scheme, rest, _ := strings.Cut(vals[0], " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", false, nil
	}
	token = strings.TrimSpace(rest)
	if token == "" {
		return "", true, errTokenEmpty
	}
	return token, true, nil
}

// challenge builds an RFC 6750 WWW-Authenticate value. errCode and desc
// are fixed strings without quotes; scope is added when non-empty.
func challenge(errCode, desc, scope string) string {
	var b strings.Builder
	b.WriteString(`Bearer realm="` + realm + `"`)
	if errCode != "" {
		b.WriteString(`, error="` + errCode + `"`)
	}
	if desc != "" {
		b.WriteString(`, error_description="` + desc + `"`)
	}
	if scope != "" {
		b.WriteString(`, scope="` + scope + `"`)
	}
	return b.String()
}

type principalKey struct{}

// principalFrom returns the principal the authenticate middleware stored.
func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}

// asksFullSSN reports whether any ssn_mode value of r's raw query is
// FULL. It reads the raw values, before parameter validation, so that the
// scope check answers before the parameters are judged.
func asksFullSSN(r *http.Request) bool {
	raw := r.URL.RawQuery
	if !strings.Contains(raw, ssnFull) && !strings.Contains(raw, "%") {
		return false // no FULL, not even percent-encoded
	}
	// ParseQuery keeps every pair it could decode, even on error.
	vals, _ := url.ParseQuery(raw)
	for _, v := range vals["ssn_mode"] {
		if v == ssnFull {
			return true
		}
	}
	return false
}

// authenticate returns the middleware that refuses requests without a
// valid token (401), without scope read:persons (403), when tenancy is on
// without the tenancy claim (403), and, when needsSSN is not nil and
// reports true for the request, without scope read:persons:ssn (403). It
// stores the principal in the request context.
func (s *Server) authenticate(needsSSN func(*http.Request) bool) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, present, err := bearerToken(r)
			if !present {
				w.Header().Set("WWW-Authenticate", challenge("", "", ""))
				writeProblem(w, r, probUnauthorized, "A bearer token is required.", nil)
				return
			}
			var p *principal
			if err == nil {
				p, err = s.verifier.verify(r.Context(), raw)
			}
			if err != nil {
				desc := errTokenSignature.Error()
				var te tokenError
				if errors.As(err, &te) {
					desc = te.Error()
				}
				code := "invalid_token"
				if errors.Is(err, errTokenEmpty) {
					code = "invalid_request"
				}
				w.Header().Set("WWW-Authenticate", challenge(code, desc, ""))
				writeProblem(w, r, probUnauthorized, "The bearer token was refused: "+desc+".", nil)
				return
			}
			if info := infoFrom(r.Context()); info != nil {
				info.subject = p.subject
			}
			if !p.hasScope(scopeRead) {
				w.Header().Set("WWW-Authenticate", challenge("insufficient_scope", "scope read:persons is required", scopeRead))
				writeProblem(w, r, probInsufficientScope, "The token lacks scope "+scopeRead+".", nil)
				return
			}
			if s.verifier.tenantClaim != "" {
				switch p.tenancy {
				case tenancyAbsent:
					writeProblem(w, r, probForbidden, "The token carries no tenancy claim.", nil)
					return
				case tenancyMalformed:
					writeProblem(w, r, probForbidden, "The token's tenancy claim is malformed: it must be an array of business id strings.", nil)
					return
				}
			}
			if needsSSN != nil && !p.hasScope(scopeSSN) && needsSSN(r) {
				w.Header().Set("WWW-Authenticate", challenge("insufficient_scope",
					"scope read:persons:ssn is required for ssn_mode FULL", scopeRead+" "+scopeSSN))
				writeProblem(w, r, probInsufficientScope, "ssn_mode=FULL needs scope "+scopeSSN+".", nil)
				return
			}
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
		})
	}
}
