package query

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

// withPrincipal returns r carrying p: in its requestInfo when observe
// made one (no new request or context to allocate), else in a context
// value.
func withPrincipal(r *http.Request, p *principal) *http.Request {
	if info := infoFrom(r.Context()); info != nil {
		info.principal = p
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// principalFrom returns the principal the authenticate middleware stored.
func principalFrom(ctx context.Context) *principal {
	if info := infoFrom(ctx); info != nil && info.principal != nil {
		return info.principal
	}
	p, _ := ctx.Value(principalKey{}).(*principal)
	return p
}
