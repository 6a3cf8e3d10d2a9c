package admin

import (
	"net/http"
)

// WithActions returns the admin listener's handler: open (probes,
// metrics, read-only extras) for every route but the state-changing
// actions, which are served behind guard. actions are keyed by ServeMux
// pattern with a method ("POST /rebuild"); every state-changing admin
// endpoint must be registered here, never in open.
func WithActions(open http.Handler, guard *TokenGuard, actions map[string]http.Handler) http.Handler {
	if len(actions) == 0 {
		return open
	}
	mux := http.NewServeMux()
	mux.Handle("/", open)
	for pattern, h := range actions {
		mux.Handle(pattern, guard.Require(h))
	}
	return mux
}
