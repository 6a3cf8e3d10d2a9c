package client

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ProblemBase is the prefix of every problem type the service sends.
const ProblemBase = "https://lookup.example/problems/"

// A ProblemType is one kind of problem the service answers. Each is an
// error, so errors.Is(err, client.ErrNotFound) holds for any *Problem of
// that type.
type ProblemType string

// Error returns the type's URI.
func (t ProblemType) Error() string { return string(t) }

// The problem types of the API (docs/api.md, query/openapi.yaml). A test
// holds this list to the document.
const (
	ErrInvalidParameters  ProblemType = ProblemBase + "invalid-parameters"   // 400
	ErrUnauthorized       ProblemType = ProblemBase + "unauthorized"         // 401
	ErrInsufficientScope  ProblemType = ProblemBase + "insufficient-scope"   // 403
	ErrForbidden          ProblemType = ProblemBase + "forbidden"            // 403: tenancy
	ErrNotFound           ProblemType = ProblemBase + "not-found"            // 404: no such resource
	ErrRouteNotFound      ProblemType = ProblemBase + "route-not-found"      // 404: a wrong base URL
	ErrMethodNotAllowed   ProblemType = ProblemBase + "method-not-allowed"   // 405
	ErrNotAcceptable      ProblemType = ProblemBase + "not-acceptable"       // 406
	ErrInternal           ProblemType = ProblemBase + "internal-error"       // 500
	ErrNotReady           ProblemType = ProblemBase + "not-ready"            // 503, retried
	ErrAuditUnavailable   ProblemType = ProblemBase + "audit-unavailable"    // 503, retried
	ErrPositionNotReached ProblemType = ProblemBase + "position-not-reached" // 503, retried
	ErrStale              ProblemType = ProblemBase + "stale"                // 503, retried
)

// Problem is an answer other than 2xx: the service's RFC 9457 problem
// details, or, for an answer that is not one (a proxy's 502 page, say),
// the status alone, with Type "about:blank" and the status text as Title.
type Problem struct {
	Type          ProblemType    `json:"type"`
	Title         string         `json:"title"`
	Status        int            `json:"status"`
	Detail        string         `json:"detail"`
	Instance      string         `json:"instance"`
	InvalidParams []InvalidParam `json:"invalid_params,omitempty"`

	// RetryAfter is the answer's Retry-After (0 when absent).
	RetryAfter time.Duration `json:"-"`
	// RequestID and Position are the answer's X-Request-Id and
	// Lookup-Position (0 when absent).
	RequestID string `json:"-"`
	Position  uint64 `json:"-"`
	// Attempts is how many requests the call sent.
	Attempts int `json:"-"`
}

// InvalidParam names one invalid parameter of a 400 and says why.
type InvalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Error reads like "lookupd: 404 not-found: No person has this id.".
func (p *Problem) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lookupd: %d %s", p.Status, strings.TrimPrefix(string(p.Type), ProblemBase))
	if p.Detail != "" {
		b.WriteString(": ")
		b.WriteString(p.Detail)
	} else if p.Title != "" {
		b.WriteString(": ")
		b.WriteString(p.Title)
	}
	for i, ip := range p.InvalidParams {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(ip.Name + ": " + ip.Reason)
		if i == len(p.InvalidParams)-1 {
			b.WriteString(")")
		}
	}
	return b.String()
}

// Is reports whether target is p's type, so that errors.Is(err,
// client.ErrStale) matches.
func (p *Problem) Is(target error) bool {
	t, ok := target.(ProblemType)
	return ok && t == p.Type
}

// Temporary reports whether the service said to try again later: a 503
// with Retry-After.
func (p *Problem) Temporary() bool {
	return p.Status == http.StatusServiceUnavailable && p.RetryAfter > 0
}

// maxProblemBody bounds how much of an error answer is read.
const maxProblemBody = 64 << 10

// problemOf makes the Problem of a non-2xx answer whose body (at most
// maxProblemBody bytes) is body. A body that is not a problem document
// still gives a Problem, with the status.
func problemOf(resp *http.Response, body []byte, meta Meta) *Problem {
	p := &Problem{}
	if isProblemJSON(resp.Header.Get("Content-Type")) {
		if err := json.Unmarshal(body, p); err != nil || p.Type == "" {
			p = &Problem{}
		}
	}
	if p.Type == "" {
		p.Type = "about:blank"
		p.Title = http.StatusText(resp.StatusCode)
		p.Detail = fmt.Sprintf("the answer is not a problem document (Content-Type %q)", resp.Header.Get("Content-Type"))
	}
	p.Status = resp.StatusCode // the answer's own status wins over the body's
	p.RetryAfter = retryAfter(resp.Header.Get("Retry-After"))
	p.RequestID = meta.RequestID
	p.Position = meta.Position
	p.Attempts = meta.Attempts
	return p
}

func isProblemJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/problem+json" || mt == "application/json")
}

// retryAfter reads a Retry-After of delay-seconds; the service sends no
// other form, and an HTTP date is read as well for a proxy's.
func retryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseUint(v, 10, 31); err == nil {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}
