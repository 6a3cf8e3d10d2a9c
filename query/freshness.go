package query

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lookup/persons/internal/problem"
	"github.com/prometheus/client_golang/prometheus"
)

// Positioner is what the API needs of the read model's position: the
// stream sequence of the last event applied, and a wait, woken by the
// commits, until a sequence has been applied.
type Positioner interface {
	// Applied returns the stream sequence of the last event applied. It
	// never decreases.
	Applied() uint64
	// Wait returns nil once Applied() >= n, or ctx's error first.
	Wait(ctx context.Context, n uint64) error
}

// Headers of the consistency protocol (docs/consistency.md).
const (
	hdrPosition    = "Lookup-Position"
	hdrMinPosition = "Lookup-Min-Position"
	hdrPrefer      = "Prefer"
)

// DefaultMaxPositionWait is how long a request with Lookup-Min-Position
// waits at most when Config.MaxPositionWait is 0.
const DefaultMaxPositionWait = 2 * time.Second

// Reasons for an invalid Lookup-Min-Position.
const reasonMinPosition = "must be a stream sequence: a decimal integer from 0 to 18446744073709551615"

// retryAfterPosition is the Retry-After of a 503 position-not-reached.
const retryAfterPosition = "1"

// Outcomes of a position wait (label of lookup_position_waits_total).
const (
	waitReached  = "reached"
	waitTimeout  = "timeout"
	waitCanceled = "canceled"
)

// freshness gates the answers of the operations on the read model's state:
// readiness, staleness, and the position a request asks for.
type freshness struct {
	ready   func() bool
	stale   func() bool // nil: never stale
	pos     Positioner  // nil: no Lookup-Position, Lookup-Min-Position ignored
	maxWait time.Duration
	waits   *prometheus.CounterVec
	// header caches the Lookup-Position value of the last position seen,
	// so that answers at the same position share one (never modified)
	// header value instead of formatting it each time.
	header atomic.Pointer[positionHeader]
}

// positionHeader is a Lookup-Position header value and its position.
type positionHeader struct {
	n uint64
	v []string
}

func newFreshness(cfg Config) (*freshness, error) {
	f := &freshness{ready: cfg.Ready, stale: cfg.Stale, pos: cfg.Position, maxWait: cfg.MaxPositionWait}
	if f.ready == nil {
		f.ready = func() bool { return true }
	}
	if f.maxWait <= 0 {
		f.maxWait = DefaultMaxPositionWait
	}
	f.waits = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "lookup_position_waits_total",
		Help: "Requests with Lookup-Min-Position that waited for the read model, by outcome (reached, timeout, canceled).",
	}, []string{"outcome"})
	for _, o := range []string{waitReached, waitTimeout, waitCanceled} {
		f.waits.WithLabelValues(o)
	}
	if cfg.Registerer != nil {
		var err error
		if f.waits, err = registerOrReuse(cfg.Registerer, f.waits); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// parseMinPosition returns the Lookup-Min-Position of r (0 when absent),
// or the invalid parameter it is.
func parseMinPosition(r *http.Request) (uint64, []invalidParam) {
	vs := r.Header[hdrMinPosition]
	if len(vs) == 0 {
		return 0, nil
	}
	if len(vs) > 1 {
		return 0, []invalidParam{{Name: hdrMinPosition, Reason: reasonRepeated}}
	}
	v := strings.TrimSpace(vs[0])
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || v[0] == '+' {
		return 0, []invalidParam{{Name: hdrMinPosition, Reason: reasonMinPosition}}
	}
	return n, nil
}

// preferWait returns the wait=<seconds> preference of r (RFC 7240), and
// whether there is a valid one. Other preferences are ignored, as are
// malformed ones (RFC 7240 section 2).
func preferWait(r *http.Request) (time.Duration, bool) {
	for _, v := range r.Header[hdrPrefer] {
		for pref := range strings.SplitSeq(v, ",") {
			pref, _, _ = strings.Cut(pref, ";")
			name, val, ok := strings.Cut(strings.TrimSpace(pref), "=")
			if !ok || !strings.EqualFold(strings.TrimSpace(name), "wait") {
				continue
			}
			val = strings.Trim(strings.TrimSpace(val), `"`)
			secs, err := strconv.ParseUint(val, 10, 32)
			if err != nil {
				continue
			}
			return time.Duration(secs) * time.Second, true
		}
	}
	return 0, false
}

// admit answers 503 and returns false when the read model may not answer
// r: not caught up yet, stale, or not at minPos within the wait. Else it
// sets Lookup-Position, read now, before the model is (the answer reflects
// at least that position), and returns true.
func (f *freshness) admit(w http.ResponseWriter, r *http.Request, minPos uint64) bool {
	if !f.ready() {
		f.setPosition(w)
		notReady(w, r)
		return false
	}
	if f.stale != nil && f.stale() {
		f.setPosition(w)
		w.Header().Set("Retry-After", retryAfterSeconds)
		writeProblem(w, r, probStale, problem.DetailStale, nil)
		return false
	}
	if f.pos == nil {
		return true
	}
	if minPos > f.pos.Applied() && !f.wait(w, r, minPos) {
		return false
	}
	f.setPosition(w)
	return true
}

// wait waits for minPos, at most the server's bound or the request's
// Prefer: wait, whichever is shorter; if not reached it answers 503 (or
// nothing, the client having gone) and returns false.
func (f *freshness) wait(w http.ResponseWriter, r *http.Request, minPos uint64) bool {
	d := f.maxWait
	if p, ok := preferWait(r); ok && p < d {
		d = p
		w.Header().Set("Preference-Applied", "wait="+strconv.FormatInt(int64(p/time.Second), 10))
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	err := f.pos.Wait(ctx, minPos)
	cancel()
	switch {
	case err == nil:
		f.waits.WithLabelValues(waitReached).Inc()
		return true
	case errors.Is(err, context.DeadlineExceeded) && r.Context().Err() == nil:
		f.waits.WithLabelValues(waitTimeout).Inc()
	default:
		f.waits.WithLabelValues(waitCanceled).Inc()
	}
	f.setPosition(w)
	w.Header().Set("Retry-After", retryAfterPosition)
	writeProblem(w, r, probPositionNotReached,
		problem.DetailPositionNotReached, nil)
	return false
}

// setPosition sets Lookup-Position to the applied position, read now.
func (f *freshness) setPosition(w http.ResponseWriter) {
	if f.pos == nil {
		return
	}
	n := f.pos.Applied()
	h := f.header.Load()
	if h == nil || h.n != n {
		// Concurrent answers may store older values: each checks n first.
		h = &positionHeader{n: n, v: []string{strconv.FormatUint(n, 10)}}
		f.header.Store(h)
	}
	w.Header()[hdrPosition] = h.v
}
