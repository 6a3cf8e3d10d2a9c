package lookuptest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/felixge/httpsnoop"
	"github.com/google/uuid"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lookup/persons/client"
	"github.com/lookup/persons/internal/ledger"
	"github.com/lookup/persons/internal/problem"
)

// An injectable failure: the problem kind the API answers, with its
// detail and Retry-After as the API writes them (query's handlers).
type failure struct {
	kind       problem.Kind
	detail     string
	retryAfter string
}

// failures are the problems SetError and FailNext can answer: those the
// service may answer any request with, whatever its data.
var failures = map[client.ProblemType]failure{
	client.ErrNotReady: {problem.NotReady,
		problem.DetailNotReady, "5"},
	client.ErrAuditUnavailable: {problem.AuditUnavailable,
		problem.DetailAuditUnavailable, "5"},
	client.ErrStale: {problem.Stale,
		problem.DetailStale, "5"},
	client.ErrPositionNotReached: {problem.PositionNotReached,
		problem.DetailPositionNotReached, "1"},
	client.ErrInternal: {problem.Internal, problem.DetailInternal, ""},
}

// faults is what the server answers in the service's place.
type faults struct {
	mu     sync.Mutex
	always client.ProblemType // SetError's; "" for none
	next   []client.ProblemType
	log    []Request
}

// SetError makes the server answer every request of the API's two
// operations with the problem p, as the service answers it, until
// SetError(""), which also drops what FailNext queued. p is one of
// client.ErrNotReady, client.ErrAuditUnavailable, client.ErrStale,
// client.ErrPositionNotReached (503s, with the service's Retry-After) and
// client.ErrInternal (a 500); SetError panics on any other.
//
// The answer is the service's: the same RFC 9457 body (type, title,
// status, detail, instance), Content-Type, Retry-After, X-Request-Id and
// Lookup-Position. It is given before the service's own checks, so even
// a request with a bad token gets it, and the request reaches neither the
// read model nor the audit ledger.
func (s *Server) SetError(p client.ProblemType) {
	if p != "" {
		mustInject(p)
	}
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.always = p
	if p == "" {
		s.faults.next = nil
	}
}

// FailNext makes the server answer the next n requests of the API's two
// operations with the problem p, as SetError does; the requests after
// them are the service's again. Calls queue up: FailNext(1,
// client.ErrNotReady) then FailNext(1, client.ErrInternal) answers a 503,
// then a 500.
func (s *Server) FailNext(n int, p client.ProblemType) {
	mustInject(p)
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	for range n {
		s.faults.next = append(s.faults.next, p)
	}
}

func mustInject(p client.ProblemType) {
	if _, ok := failures[p]; !ok {
		panic(fmt.Sprintf("lookuptest: %s cannot be injected: want client.ErrNotReady, ErrAuditUnavailable, ErrStale, ErrPositionNotReached or ErrInternal", p))
	}
}

// take returns the failure the next request of an operation is answered
// with, if any.
func (f *faults) take() (client.ProblemType, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.next) > 0 {
		p := f.next[0]
		f.next = f.next[1:]
		return p, true
	}
	return f.always, f.always != ""
}

// A Request is one request the server answered.
type Request struct {
	Method string
	Path   string // without the query
	Query  string // the raw query, without "?"
	Status int
	// RequestID is the answer's X-Request-Id: the one sent, or the one
	// the service made.
	RequestID string
	// Injected says that SetError or FailNext answered it, not the
	// service.
	Injected bool
	// Audit holds the records of the disclosure ledger that the answer
	// wrote (one per person whose protected data it disclosed): none for
	// an answer that disclosed none, or with WithAudit("off").
	Audit []AuditRecord
}

// AuditRecord is one record of the disclosure ledger: who was shown
// which protected data of whom, and why (docs/audit.md). It never holds
// the data itself.
type AuditRecord struct {
	Operation string // "getAuthorizedSigners"
	PersonID  string // the signer's id
	// SSNMode is the ssn_mode of the SSN disclosed ("" for none);
	// DOBDisclosed says whether the date of birth was.
	SSNMode      string
	DOBDisclosed bool
	Purpose      string   // the request's Lookup-Purpose
	Subject      string   // the token's sub
	Client       string   // the token's azp or client_id
	Tenants      []string // the token's tenants, with tenancy on
	Time         time.Time
}

// Requests returns the requests the server has answered, oldest first,
// each with the ledger records its answer wrote, read from the audit
// stream. With WithAudit("required"), the default, a record is stored
// before its answer is sent, so a request the test's client has had its
// answer to shows its records; with "best-effort" they may come later.
// Records are matched to requests by request id: requests sent under one
// id (a client's retries) each show the records of all that answered
// 2xx.
func (s *Server) Requests(ctx context.Context) ([]Request, error) {
	s.faults.mu.Lock()
	reqs := make([]Request, len(s.faults.log))
	copy(reqs, s.faults.log)
	s.faults.mu.Unlock()
	if s.cfg.audit == ledger.Off {
		return reqs, nil
	}
	byID := map[string][]AuditRecord{}
	err := ledger.Scan(ctx, s.js, ledger.DefaultStream, 0, func(_ uint64, recs []ledger.Record) error {
		for _, r := range recs {
			byID[r.RequestID] = append(byID[r.RequestID], AuditRecord{Operation: r.Operation, PersonID: r.PersonID,
				SSNMode: r.SSNMode, DOBDisclosed: r.DOBDisclosed, Purpose: r.Purpose, Subject: r.Subject,
				Client: r.Client, Tenants: r.Tenants, Time: r.Time})
		}
		return nil
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) { // nothing recorded yet
		err = nil
	}
	if err != nil {
		return reqs, fmt.Errorf("lookuptest: reading the audit stream: %w", err)
	}
	for i := range reqs {
		if reqs[i].Status >= 200 && reqs[i].Status < 300 {
			reqs[i].Audit = byID[reqs[i].RequestID]
		}
	}
	return reqs, nil
}

// ClearRequests forgets the requests answered so far (the audit stream
// keeps its records).
func (s *Server) ClearRequests() {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	s.faults.log = nil
}

// operation reports whether r is a request of one of the API's two
// operations.
func operation(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		(strings.HasPrefix(r.URL.Path, "/api/v1/persons/") || r.URL.Path == "/api/v1/authorized-signers")
}

// answer serves api, answering the failures SetError and FailNext ask
// for in its place, and logs every request. A request is logged when its
// status is written, before any of the answer can reach the caller, so a
// caller that has its answer finds the request in Requests.
func (s *Server) answer(api http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, inject := client.ProblemType(""), false
		if operation(r) {
			p, inject = s.faults.take()
		}
		logged := false
		logOnce := func(status int) {
			if logged {
				return
			}
			logged = true
			s.faults.mu.Lock()
			defer s.faults.mu.Unlock()
			s.faults.log = append(s.faults.log, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
				Status: status, RequestID: w.Header().Get("X-Request-Id"), Injected: inject})
		}
		lw := httpsnoop.Wrap(w, httpsnoop.Hooks{
			WriteHeader: func(next httpsnoop.WriteHeaderFunc) httpsnoop.WriteHeaderFunc {
				return func(code int) {
					logOnce(code)
					next(code)
				}
			},
			Write: func(next httpsnoop.WriteFunc) httpsnoop.WriteFunc {
				return func(b []byte) (int, error) {
					logOnce(http.StatusOK)
					return next(b)
				}
			},
			ReadFrom: func(next httpsnoop.ReadFromFunc) httpsnoop.ReadFromFunc {
				return func(src io.Reader) (int64, error) {
					logOnce(http.StatusOK)
					return next(src)
				}
			},
		})
		if inject {
			s.inject(lw, r, failures[p])
		} else {
			api.ServeHTTP(lw, r)
		}
		logOnce(http.StatusOK) // an answer with no status nor body written
	})
}

// inject answers r with f as the API would: its common headers, the
// request id (the one sent if the API would take it, else a new one), the
// position and Retry-After, and the problem's body.
func (s *Server) inject(w http.ResponseWriter, r *http.Request, f failure) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	id := r.Header.Get("X-Request-Id")
	if len(r.Header.Values("X-Request-Id")) != 1 || !validRequestID(id) {
		id = uuid.NewString()
	}
	h.Set("X-Request-Id", id)
	h.Set("Lookup-Position", strconv.FormatUint(s.rep.Applied(), 10))
	if f.retryAfter != "" {
		h.Set("Retry-After", f.retryAfter)
	}
	problem.Write(w, r, f.kind, f.detail, nil)
}

// validRequestID is the API's rule for an X-Request-Id it keeps: 1 to
// 128 visible ASCII characters.
func validRequestID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return false
		}
	}
	return true
}
