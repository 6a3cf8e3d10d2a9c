package auth

import (
	"context"
	"net/http"
	"strings"
)

// principal is what a verified token says about its bearer. It is
// immutable once made: a cached one is shared by concurrent requests.
type principal struct {
	subject string
	client  string // azp, else client_id: recorded by the audit ledger
	scopes  []string
	// tenants are the lower-cased business ids of the tenancy claim;
	// tenancy says whether the claim is there and well-formed.
	tenants []string
	tenancy tenancyClaim
	// tenancyOn is true when the verifier checks tenancy.
	tenancyOn bool
}

// Subject is the token's sub.
func (p *principal) Subject() string { return p.subject }

// Client is the token's azp, else its client_id.
func (p *principal) Client() string { return p.client }

// HasScope reports whether the token carries scope s.
func (p *principal) HasScope(s string) bool { return p.hasScope(s) }

// TenancyOn reports whether the verifier checks a tenancy claim.
func (p *principal) TenancyOn() bool { return p.tenancyOn }

// TenancyClaim reports whether the token carries the tenancy claim and
// whether it is well-formed (an array of business id strings).
func (p *principal) TenancyClaim() (present, wellFormed bool) {
	return p.tenancy != tenancyAbsent, p.tenancy == tenancyValid
}

// Tenants are the lower-cased business ids of the tenancy claim.
func (p *principal) Tenants() []string { return p.tenants }

// MayAccess reports whether the tenancy claim holds businessID.
func (p *principal) MayAccess(businessID string) bool { return p.mayAccess(businessID) }

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

// size approximates the bytes the principal holds, for the cache bound.
func (p *principal) size() int {
	n := 112 + len(p.subject) + len(p.client)
	for _, s := range p.scopes {
		n += 16 + len(s)
	}
	for _, s := range p.tenants {
		n += 16 + len(s)
	}
	return n
}

// tenancyClaim is the state of a token's tenancy claim.
type tenancyClaim int

const (
	tenancyAbsent    tenancyClaim = iota // no such claim
	tenancyMalformed                     // not an array of strings
	tenancyValid                         // an array of business id strings
)

type principalKey struct{}

// withPrincipal returns r carrying p in a context value (for CallerFrom).
func withPrincipal(r *http.Request, p *principal) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// principalFrom returns the principal the Authenticator stored.
func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}
