package query

import (
	"context"
	"net/http"
)

type principalKey struct{}

// withPrincipal returns r carrying p: in its requestInfo when observe
// made one (no new request or context to allocate), else in a context
// value.
func withPrincipal(r *http.Request, p Principal) *http.Request {
	if info := infoFrom(r.Context()); info != nil {
		info.principal = p
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// principalFrom returns the principal the authenticate middleware stored.
func principalFrom(ctx context.Context) Principal {
	if info := infoFrom(ctx); info != nil && info.principal != nil {
		return info.principal
	}
	p, _ := ctx.Value(principalKey{}).(Principal)
	return p
}
