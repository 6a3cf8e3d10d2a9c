package query

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"
)

// record writes the access log line, timed at end, and the metrics of one
// request that took d. The line's attributes are built in place, without a
// slice on the heap, and the record goes to the handler directly: the
// logger would capture the caller's program counter, which no line shows.
func (s *Server) record(r *http.Request, end time.Time, d time.Duration, info *requestInfo) {
	status := info.status
	if status == 0 {
		status = http.StatusOK // net/http's answer to a handler that wrote nothing
	}
	route := routeLabel(r, info)
	method := methodLabel(r.Method)
	s.metrics.observe(route, method, status, d)
	level := slog.LevelInfo
	var attrs [7]slog.Attr
	attrs[0] = slog.String("method", method)
	attrs[1] = slog.String("route", route)
	attrs[2] = slog.Int("status", status)
	attrs[3] = slog.Duration("duration", d)
	attrs[4] = slog.String("request_id", info.requestID)
	n := 5
	if info.subject != "" {
		attrs[n] = slog.String("sub", info.subject)
		n++
	}
	if info.err != nil {
		level = slog.LevelError
		attrs[n] = slog.String("error", info.err.Error())
		n++
	} else if info.clientGone {
		attrs[n] = slog.Bool("client_gone", true)
		n++
	}
	h := s.log.Handler()
	if !h.Enabled(r.Context(), level) {
		return
	}
	rec := slog.NewRecord(end, level, "request", 0)
	rec.AddAttrs(attrs[:n]...)
	_ = h.Handle(r.Context(), rec)
}

// unmatchedRoute labels requests to unknown paths (404), so that the
// route label stays bounded.
const unmatchedRoute = "unmatched"

// routeLabel returns the route pattern of r: chi's, else the one found
// for a 405, else unmatchedRoute.
func routeLabel(r *http.Request, info *requestInfo) string {
	if info != nil && info.route != "" {
		return info.route
	}
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return unmatchedRoute
}

// methodLabel bounds the method label to the methods HTTP defines.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "OTHER"
}
