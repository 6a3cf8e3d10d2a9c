// Package query is the HTTP API of the Person and Authorized Signer Lookup
// service: Get Person and Get Authorized Signers behind bearer-JWT
// authentication, answered from a read model it reaches through the small
// Reader interface (it never imports the projector).
//
// The API is described by openapi.yaml (embedded, served at
// GET /openapi.yaml). Every non-2xx answer is an RFC 9457 problem.
//
// Checks run in this order: X-Request-Id (400), routing (404 unknown path,
// 405 other method), Accept (406), authentication (401), scope and tenancy
// claim presence (403), parameters (400), the FULL ssn_mode scope (403),
// then the resource (404, or 403 for another tenant's).
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
	// events.ErrNotFound if the consumer is unknown or deleted or has no
	// signers.
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
}

// Errors of NewServer.
var (
	ErrNoReader = errors.New("query: Config.Reader is required")
	ErrNoKeys   = errors.New("query: Config.Keys is required")
)

// Server is the HTTP API. It is an http.Handler, safe for concurrent use.
type Server struct {
	reader   Reader
	verifier *tokenVerifier
	log      *slog.Logger
	metrics  *httpMetrics
	router   chi.Router
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
	s := &Server{
		reader:   cfg.Reader,
		verifier: newTokenVerifier(cfg.Keys, cfg.Issuer, cfg.Audience, cfg.TenantClaim, now),
		log:      log,
		metrics:  m,
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
	subject   string
	err       error // cause of a 500, for the log
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
// the X-Request-Id (400 for an invalid one, echoing a generated id), turns
// panics into 500 problems, and records the access log line and metrics.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		w.Header().Set("Cache-Control", "no-store")

		info := &requestInfo{}
		ids := r.Header.Values("X-Request-Id")
		var reason string
		switch {
		case len(ids) > 1:
			reason = "must be given at most once"
		case len(ids) == 1 && ids[0] != "":
			reason = requestIDReason(ids[0])
			if reason == "" {
				info.requestID = ids[0]
			}
		}
		if info.requestID == "" {
			info.requestID = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", info.requestID)

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

		if reason != "" {
			writeProblem(sw, r, probInvalidParams, "The X-Request-Id header is invalid.",
				[]invalidParam{{Name: "X-Request-Id", Reason: reason}})
			return
		}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))
	})
}

// record writes the access log line and the metrics of one request.
func (s *Server) record(r *http.Request, status int, d time.Duration, info *requestInfo) {
	if status == 0 {
		status = http.StatusOK
	}
	route := routeLabel(r)
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
	level := slog.LevelInfo
	if info.err != nil {
		level = slog.LevelError
		attrs = append(attrs, slog.String("error", info.err.Error()))
	}
	s.log.LogAttrs(r.Context(), level, "request", attrs...)
}

// unmatchedRoute labels requests that matched no route (404 and 405), so
// that the route label stays bounded.
const unmatchedRoute = "unmatched"

func routeLabel(r *http.Request) string {
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
