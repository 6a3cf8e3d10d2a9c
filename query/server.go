// Package query is the HTTP API of the Person and Authorized Signer Lookup
// service: Get Person and Get Authorized Signers behind bearer-JWT
// authentication, answered from a read model it reaches through the small
// Reader interface (it never imports the projector).
//
// The API is described by openapi.yaml (embedded, served at
// GET /openapi.yaml). Every non-2xx answer is an RFC 9457 problem.
//
// Checks run in this order (PRODUCT.md section 4: authentication, scope,
// parameters, then the resource): routing (404 unknown path, 405 other
// method), the token (401), scope read:persons, presence of the tenancy
// claim and, for ssn_mode=FULL, scope read:persons:ssn (403), then the
// parameters: X-Request-Id (400), Accept (406), query and path parameters
// (400); then readiness (503 until the read model has caught up) and
// finally the resource (404, or 403 for another tenant's).
package query

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"
	"github.com/lookup/persons/events"
	"github.com/prometheus/client_golang/prometheus"
)

// Reader is what the API needs of the read model.
type Reader interface {
	// Person returns the consumer or business contact with id (lower-case
	// canonical UUID). Returns events.ErrNotFound if there is none.
	Person(ctx context.Context, id string) (events.Person, error)
	// Signers returns the consumer and its signers (in no particular order:
	// the API sorts them by last_name, first_name, signer id). Returns
	// events.ErrNotFound only if the consumer is unknown or deleted; a
	// consumer without signers is returned with an empty slice and a nil
	// error (the API checks tenancy on the consumer, then answers 404).
	Signers(ctx context.Context, consumerID string) (events.Person, []events.Signer, error)
}

// Config configures a Server.
type Config struct {
	Reader      Reader                // required
	Keys        *JWKS                 // required: token verification keys
	Issuer      string                // required `iss` ("" = not checked)
	Audience    string                // required `aud` ("" = not checked)
	TenantClaim string                // claim holding the caller's business ids; "" = tenancy off
	Logger      *slog.Logger          // access log; nil = discard
	Registerer  prometheus.Registerer // HTTP metrics registered here; nil = none
	Now         func() time.Time      // nil = time.Now
	// Ready reports whether the read model has caught up and may answer;
	// while it returns false both operations answer 503 (after the
	// authentication, scope and parameter checks). nil = always ready.
	Ready func() bool
	// Auditor records every answer that discloses protected data before
	// it is sent (see Auditor); nil = none recorded. RequirePurpose makes
	// the Lookup-Purpose header required on requests for protected data.
	Auditor        Auditor
	RequirePurpose bool
}

// Errors of NewServer.
var (
	ErrNoReader = errors.New("query: Config.Reader is required")
	ErrNoKeys   = errors.New("query: Config.Keys is required")
)

// Server is the HTTP API. It is an http.Handler, safe for concurrent use.
type Server struct {
	reader   Reader
	ready    func() bool
	verifier *tokenVerifier
	log      *slog.Logger
	metrics  *httpMetrics
	router   chi.Router
	audit    auditing
}

var _ http.Handler = (*Server)(nil)

// NewServer returns the HTTP API configured by cfg. It returns ErrNoReader
// or ErrNoKeys if cfg lacks a Reader or Keys, and an error if the metrics
// cannot be registered with cfg.Registerer.
func NewServer(cfg Config) (*Server, error) {
	if cfg.Reader == nil {
		return nil, ErrNoReader
	}
	if cfg.Keys == nil {
		return nil, ErrNoKeys
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	m, err := newHTTPMetrics(cfg.Registerer)
	if err != nil {
		return nil, err
	}
	ready := cfg.Ready
	if ready == nil {
		ready = func() bool { return true }
	}
	s := &Server{
		reader:   cfg.Reader,
		ready:    ready,
		verifier: newTokenVerifier(cfg.Keys, cfg.Issuer, cfg.Audience, cfg.TenantClaim, now),
		log:      log,
		metrics:  m,
		audit:    auditing{auditor: cfg.Auditor, requirePurpose: cfg.RequirePurpose},
	}
	s.router = s.routes()
	return s, nil
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.router.ServeHTTP(w, r)
}

// requestInfo is per-request state shared between the outermost
// middleware and the handlers inside it.
type requestInfo struct {
	requestID string
	// badRequestID says why the X-Request-Id sent is invalid ("" when it
	// is fine); the 400 is answered after authentication and scope.
	badRequestID string
	subject      string
	// route overrides the route label when chi knows no pattern (a 405
	// on a real path).
	route string
	err   error // cause of a 500, for the log
	// clientGone is set when the request failed because the client went
	// away: nothing is answered and the access log records 499.
	clientGone bool
}

type requestInfoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	i, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return i
}

// maxRequestIDLen is the longest X-Request-Id accepted.
const maxRequestIDLen = 128

// requestIDReason returns why id is not an acceptable X-Request-Id, or "".
func requestIDReason(id string) string {
	if len(id) > maxRequestIDLen {
		return "must be at most 128 characters"
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return "must hold only visible ASCII characters"
		}
	}
	return ""
}

// statusWriter records the status written through it.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe is the outermost middleware: it sets Cache-Control, resolves
// the X-Request-Id (an invalid one is replaced by a generated id at once,
// and answered with a 400 by checkRequestID once authentication and scope
// have passed), turns panics into 500 problems, and records the access log
// line and metrics.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		w.Header().Set("Cache-Control", "no-store")

		info := &requestInfo{}
		ids := r.Header.Values("X-Request-Id")
		switch {
		case len(ids) > 1:
			info.badRequestID = "must be given at most once"
		case len(ids) == 1 && ids[0] != "":
			info.badRequestID = requestIDReason(ids[0])
			if info.badRequestID == "" {
				info.requestID = ids[0]
			}
		}
		if info.requestID == "" {
			info.requestID = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", info.requestID)

		r = r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info))
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				// The panic value may hold request data; log only the stack.
				s.log.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
					slog.String("request_id", info.requestID),
					slog.String("stack", string(debug.Stack())))
				if sw.status == 0 {
					writeProblem(sw, r, probInternal, "The server failed to answer the request.", nil)
				}
			}
			s.record(r, sw.status, time.Since(start), info)
		}()
		next.ServeHTTP(sw, r)
	})
}

// checkRequestID answers 400 when the request's X-Request-Id is invalid
// (the answer echoes the generated id observe put in its place).
func checkRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := infoFrom(r.Context()); info != nil && info.badRequestID != "" {
			writeProblem(w, r, probInvalidParams, "The X-Request-Id header is invalid.",
				[]invalidParam{{Name: "X-Request-Id", Reason: info.badRequestID}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// record writes the access log line and the metrics of one request.
func (s *Server) record(r *http.Request, status int, d time.Duration, info *requestInfo) {
	if status == 0 {
		status = http.StatusOK
	}
	level := slog.LevelInfo
	if info.clientGone {
		status = statusClientClosed
	}
	route := routeLabel(r, info)
	method := methodLabel(r.Method)
	s.metrics.observe(route, method, status, d)
	attrs := []slog.Attr{
		slog.String("method", method),
		slog.String("route", route),
		slog.Int("status", status),
		slog.Duration("duration", d),
		slog.String("request_id", info.requestID),
	}
	if info.subject != "" {
		attrs = append(attrs, slog.String("sub", info.subject))
	}
	switch {
	case info.clientGone:
		attrs = append(attrs, slog.Bool("client_gone", true))
	case info.err != nil:
		level = slog.LevelError
		attrs = append(attrs, slog.String("error", info.err.Error()))
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// unmatchedRoute labels requests to unknown paths (404), so that the
// route label stays bounded.
const unmatchedRoute = "unmatched"

// statusClientClosed is the status the access log and the metrics record
// for a request abandoned by its client (nginx's 499); nothing is sent.
const statusClientClosed = 499

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

// httpMetrics are the Prometheus metrics of the API.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) (*httpMetrics, error) {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "lookup_http_requests_total",
			Help: "HTTP requests answered, by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "lookup_http_request_duration_seconds",
			Help:    "Time to answer HTTP requests, by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
	}
	if reg == nil {
		return m, nil
	}
	var err error
	if m.requests, err = registerOrReuse(reg, m.requests); err != nil {
		return nil, err
	}
	if m.duration, err = registerOrReuse(reg, m.duration); err != nil {
		return nil, err
	}
	return m, nil
}

// registerOrReuse registers c, or returns the equal collector already
// registered (two servers may share one registry).
func registerOrReuse[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		return c, err
	}
	return c, nil
}

func (m *httpMetrics) observe(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route, method).Observe(d.Seconds())
}
