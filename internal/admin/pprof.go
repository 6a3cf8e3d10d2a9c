package admin

import (
	"context"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"
)

// handlePProf registers net/http/pprof on mux under /debug/pprof/ (the
// paths go tool pprof expects). It is off unless LOOKUP_PPROF is true:
// profiles show the program's code and load, not its data, but the admin
// listener must not be reachable from outside the cluster either way.
func handlePProf(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index) // and the named profiles: heap, goroutine, allocs, ...
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", beyondWriteTimeout(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/trace", beyondWriteTimeout(pprof.Trace))
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
}

// profileSlack is how long a CPU profile or trace answer may take beyond
// the duration asked for.
const profileSlack = 30 * time.Second

// beyondWriteTimeout lets h, a CPU profile or trace taking ?seconds=N
// (default 30, as go tool pprof asks), answer after the admin listener's
// write timeout: the connection's write deadline is moved to N seconds
// plus profileSlack from now, and h is not told the server's timeout
// (pprof refuses a duration beyond it).
func beyondWriteTimeout(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sec, err := strconv.ParseInt(r.URL.Query().Get("seconds"), 10, 64)
		if err != nil || sec <= 0 {
			sec = 30
		}
		sec = min(sec, 24*3600)
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Duration(sec)*time.Second + profileSlack))
		h(w, r.WithContext(context.WithValue(r.Context(), http.ServerContextKey, nil)))
	}
}
