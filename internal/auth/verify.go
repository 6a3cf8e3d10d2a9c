package auth

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jws"
)

const (
	// clockSkew is the leeway allowed on exp, nbf and iat.
	clockSkew = 30 * time.Second
	// maxTokenBytes bounds the size of an accepted bearer token.
	maxTokenBytes = 8 << 10
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
	errTokenKey          tokenError = "no key verifies the token" //nolint:gosec // G101: an error message, not a credential
	errTokenSignature    tokenError = "the token signature or claims are invalid"
	errTokenExpired      tokenError = "the token is expired" //nolint:gosec // G101: an error message, not a credential
	errTokenNotYetValid  tokenError = "the token is not valid yet"
	errTokenIssuedFuture tokenError = "the token was issued in the future"
	errTokenIssuer       tokenError = "the token issuer is not accepted"
	errTokenAudience     tokenError = "the token audience is not accepted"
	errTokenClient       tokenError = "the token's client (azp or client_id) is not accepted"
	errTokenMissingExp   tokenError = "the token has no exp claim"
	errTokenCrit         tokenError = "the token names critical header extensions"
	errTokenTimeClaim    tokenError = "the token exp, nbf or iat claim is not a number" //nolint:gosec // G101: an error message, not a credential
	// errTokenHeaders and errTokenEmpty are answered with
	// error="invalid_request" (RFC 6750 section 3.1: a malformed request,
	// not a bad token).
	errTokenHeaders tokenError = "more than one Authorization header" //nolint:gosec // G101: an error message, not a credential
	errTokenEmpty   tokenError = "the bearer token is empty"          //nolint:gosec // G101: an error message, not a credential
)

// tokenVerifier verifies bearer tokens.
type tokenVerifier struct {
	keys  *JWKS
	rules tokenRules
	now   func() time.Time
	cache *tokenCache // nil: every token is verified afresh
}

// tokenRules are what a token's claims must say, besides its times.
type tokenRules struct {
	issuer   string     // "" = not checked
	audience string     // "" = not checked
	clients  []string   // azp, else client_id, one of these; empty = not checked
	names    claimNames // the tenancy claim and the claims granting scopes
}

func newTokenVerifier(keys *JWKS, rules tokenRules, now func() time.Time, cache *tokenCache) *tokenVerifier {
	return &tokenVerifier{keys: keys, rules: rules, now: now, cache: cache}
}

// verify checks raw (a compact JWS) and returns its principal, or a
// tokenError saying why the token is refused. A token verified before is
// answered from the cache, after its time claims and its key are checked
// again. When ctx ends during a failed verification, verify returns ctx's
// error instead: the caller went away, the token was not judged.
func (v *tokenVerifier) verify(ctx context.Context, raw string) (*principal, error) {
	if len(raw) > maxTokenBytes {
		return nil, errTokenTooLarge
	}
	// A cached entry is keyed by the hash of the whole token, which passed
	// every check below when it was verified: its form needs no new look.
	var sum [32]byte
	if v.cache != nil {
		sum = hashToken(raw)
		if p := v.cache.get(sum, v.now(), v.keys.current()); p != nil {
			return p, nil
		}
	}
	if !isCompactJWS(raw) {
		return nil, errTokenMalformed
	}
	got, err := v.verifyFresh(ctx, raw)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	if v.cache != nil && got.identified {
		v.cache.add(sum, got, v.now())
	}
	return got.p, nil
}

// verified is the outcome of a fresh verification.
type verified struct {
	p     *principal
	times tokenTimes
	// key is the identity of the key that verified the signature, gen the
	// generation of the key set current before the key was looked up;
	// identified is false when the key could not be told.
	key        keyIdentity
	gen        uint64
	identified bool
}

// verifyFresh verifies the signature of raw, then reads and checks its
// claims in one pass over the payload.
func (v *tokenVerifier) verifyFresh(ctx context.Context, raw string) (verified, error) {
	call := &verifyCall{v: v, gen: v.keys.current().gen}
	var used any
	payload, err := jws.Verify([]byte(raw), jws.WithKeyProvider(call), jws.WithContext(ctx), jws.WithKeyUsed(&used))
	if err != nil {
		var te tokenError
		if errors.As(err, &te) {
			return verified{}, te
		}
		if cerr := ctx.Err(); cerr != nil {
			return verified{}, cerr
		}
		return verified{}, errTokenSignature
	}
	c, err := readClaims(payload, v.rules.names)
	if err != nil {
		return verified{}, err
	}
	if err := c.times.check(v.now()); err != nil {
		return verified{}, err
	}
	if r := v.rules; r.issuer != "" && (!c.hasIss || c.iss != r.issuer) {
		return verified{}, errTokenIssuer
	}
	if r := v.rules; r.audience != "" && !slices.Contains(c.aud, r.audience) {
		return verified{}, errTokenAudience
	}
	if r := v.rules; len(r.clients) > 0 && (c.client == "" || !slices.Contains(r.clients, c.client)) {
		return verified{}, errTokenClient
	}
	p := &principal{subject: c.sub, client: c.client, scopes: append(append(c.scope, c.scp...), c.granted...)}
	if v.rules.names.tenant != "" {
		p.tenancyOn = true
		p.tenants, p.tenancy = c.tenants, c.tenancy
	}
	got := verified{p: p, times: c.times, gen: call.gen}
	for _, k := range call.cands {
		if sameKey(k.key, used) {
			got.key, got.identified = k.identity(call.alg), true
			break
		}
	}
	return got, nil
}

// verifyCall is the jws key provider of one verification: it hands jws
// the keys that may verify the token and remembers them, so that the one
// that did can be told afterwards.
type verifyCall struct {
	v     *tokenVerifier
	gen   uint64
	alg   jwa.SignatureAlgorithm
	cands []verifyKey
}

// FetchKeys hands jws the keys that may verify sig: only for an accepted
// algorithm, and only keys whose type (and own alg) allow it.
func (c *verifyCall) FetchKeys(ctx context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
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
	keys := c.v.keys.candidates(ctx, kid, alg)
	if len(keys) == 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		return errTokenKey
	}
	c.alg, c.cands = alg, keys
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
