// Package auth is the verification of bearer tokens (JWTs): whose keys,
// which claims, what is refused and why.
//
// Its contract: a JWKS read from a file or fetched from a URL (JWKS,
// OpenJWKS; refreshed in the background, refetched once, single-flight,
// for a token naming an unknown kid, with a cool-down; https only but to
// a loopback host), the checks of a token (compact JWS, size, accepted
// algorithms, signature against a usable key, exp, nbf, iat with 30 s of
// leeway, issuer, audience, the tenancy claim) and a bounded cache of the
// tokens it verified, each answered from the cache only after its time
// claims and its key are checked again. A Verifier judges the
// Authorization header of a request: the principal of a valid token, or a
// refusal whose text is a fixed phrase fit for an RFC 6750
// error_description, never any part of the token. It is the
// query.TokenVerifier of the API (cmd/lookupd gives it to
// query.NewServer; query holds no key and checks no signature). An
// Authenticator admits the requests of another service of this module
// (lookupd audit serve) that bear a token the API would accept and a
// scope of that service's own, answering as the API does (401 with a
// WWW-Authenticate challenge, 403 insufficient-scope), and gives the
// caller to its handler (CallerFrom).
//
// It imports neither query nor projector.
package auth
