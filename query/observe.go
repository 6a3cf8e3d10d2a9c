package query

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/felixge/httpsnoop"
	"github.com/lookup/persons/internal/problem"
)

// requestInfo is per-request state shared between the outermost
// middleware and the handlers inside it.
type requestInfo struct {
	requestID string
	// badRequestID says why the X-Request-Id sent is invalid ("" when it
	// is fine); the 400 is answered after authentication and scope.
	badRequestID string
	subject      string
	// principal is the caller, once authenticated (see withPrincipal).
	principal Principal
	// route overrides the route label when chi knows no pattern (a 405
	// on a real path, OPTIONS *).
	route string
	err   error // cause of a 500, for the log
	// status is the first final status written (0: none yet).
	status int
	// clientGone is set when the client's side of the connection closed
	// before the answer was complete (see observe).
	clientGone bool
	// The values of the X-Request-Id and Content-Length headers, kept
	// here so that setting them allocates nothing more.
	requestIDValue [1]string
	contentLength  [1]string
}

// captureStatus is the httpsnoop WriteHeader hook recording the status.
func (i *requestInfo) captureStatus(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
	return func(code int) {
		if i.status == 0 && code >= 200 {
			i.status = code
		}
		next(code)
	}
}

type requestInfoKey struct{}

// requestContext is the context the handlers run on: the values of the
// client's request context without its cancellation or deadline (see
// observe), and the request's requestInfo, in one allocation. It is
// context.WithoutCancel's contract written out, because the standard one
// allocates on every Value call that passes through it.
type requestContext struct {
	parent context.Context
	info   requestInfo
}

var _ context.Context = (*requestContext)(nil)

func (*requestContext) Deadline() (time.Time, bool) { return time.Time{}, false }
func (*requestContext) Done() <-chan struct{}       { return nil }
func (*requestContext) Err() error                  { return nil }

func (c *requestContext) Value(key any) any {
	switch key.(type) {
	case requestInfoKey:
		return &c.info
	case *int:
		// The context package finds a context's cancellation (for
		// context.Cause) under a key of type *int; this context has none.
		// No other key has that type (keys are unexported named types).
		return nil
	}
	return c.parent.Value(key)
}

func infoFrom(ctx context.Context) *requestInfo {
	i, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return i
}

// observe is the outermost middleware: it sets the headers every answer
// carries (Cache-Control, X-Content-Type-Options, X-Request-Id: an invalid
// one is replaced by a generated id at once, and answered with a 400 by
// checkRequestID once authentication and scope have passed), turns panics
// into 500 problems, and records the access log line and metrics.
//
// The handlers run on a context that is not cancelled when the client
// closes its side of the connection. net/http cancels the request context
// as soon as it reads EOF from the client, which a client that sends its
// request and then half-closes (shutdown(SHUT_WR)) causes while it still
// waits for the answer; an answer is a few microseconds of local reads,
// so it is always completed and written (to a client that has really
// gone, the write fails unseen). The access log marks such a request with
// client_gone=true and the status written.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		client := r.Context()
		ctx := &requestContext{parent: client}
		info := &ctx.info
		resolveRequestID(info, r.Header)
		h := w.Header()
		setCommonHeaders(h)
		h["X-Request-Id"] = info.requestIDValue[:]
		r = r.WithContext(ctx)
		w = httpsnoop.Wrap(w, httpsnoop.Hooks{WriteHeader: info.captureStatus})
		defer func() {
			if v := recover(); v != nil {
				if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
					panic(v)
				}
				// The panic value may hold request data; log only the stack.
				s.log.LogAttrs(ctx, slog.LevelError, "panic serving request",
					slog.String("request_id", info.requestID),
					slog.String("stack", string(debug.Stack())))
				if info.status == 0 {
					writeProblem(w, r, probInternal, problem.DetailInternal, nil)
				}
			}
			info.clientGone = client.Err() != nil
			end := time.Now()
			s.record(r, end, end.Sub(start), info)
		}()
		next.ServeHTTP(w, r)
	})
}
