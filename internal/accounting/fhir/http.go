package fhir

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lookup/persons/internal/accounting"
	"github.com/lookup/persons/internal/auth"
	"github.com/lookup/persons/internal/ledger"
)

// HandlerConfig configures NewHandler.
type HandlerConfig struct {
	Index *accounting.Index
	// Authorize checks the caller's credentials (a bearer token with the
	// scope read:audit) and returns who it is. Required. (lookupd audit
	// serve checks the token in front of the handler, with
	// auth.Authenticator, and reads the caller with auth.CallerFrom.)
	Authorize func(r *http.Request) (auth.Caller, error)
	// Record records the search itself (the accounting of the
	// accounting) before it is answered; an error makes the answer a 503
	// and discloses nothing. Required. accounting.LedgerRecorder records
	// it in the audit ledger.
	Record func(ctx context.Context, a accounting.Access) error
	Now    func() time.Time // nil = time.Now
}

// maxCount bounds _count.
const maxCount = 500

// NewHandler returns the accounting service's search:
//
//	GET /fhir/AuditEvent?entity=<person id>&date=ge<time>&date=le<time>&_count=<n>
//
// answers a FHIR R4 searchset Bundle of the person's AuditEvents (IHE
// BALP patient-read), newest first, with a next link while there are more;
// with _format=jsonl, one record per line, the next page in a Link header.
// A time is RFC 3339 or a date (YYYY-MM-DD, UTC; le a date means its whole
// day). Errors are FHIR OperationOutcomes.
func NewHandler(cfg HandlerConfig) http.Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /fhir/AuditEvent", cfg.search)
	return Headers(mux)
}

// Headers sets the headers of every answer of the search, its Bundles
// and OperationOutcomes (and, in front of an authenticator, its refusals):
// nothing cached, nothing sniffed, as the API's answers.
func Headers(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}

func (cfg HandlerConfig) search(w http.ResponseWriter, r *http.Request) {
	caller, err := cfg.Authorize(r)
	if errors.Is(err, accounting.ErrForbidden) {
		outcome(w, http.StatusForbidden, "forbidden", "the token does not allow reading the accounting of disclosures (scope read:audit)")
		return
	}
	if err != nil {
		w.Header().Set("WWW-Authenticate", `Bearer`)
		outcome(w, http.StatusUnauthorized, "login", "a valid bearer token is required")
		return
	}
	q, jsonl, err := parseSearch(r.URL.Query())
	if err != nil {
		outcome(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	purpose, err := accounting.PurposeOf(r)
	if err != nil {
		outcome(w, http.StatusBadRequest, "invalid", err.Error())
		return
	}
	recs, next, err := cfg.Index.Search(q)
	if errors.Is(err, accounting.ErrBadCursor) {
		outcome(w, http.StatusBadRequest, "invalid", "_cursor: not a cursor this service gave")
		return
	}
	if err != nil {
		outcome(w, http.StatusInternalServerError, "exception", "the accounting index could not be read")
		return
	}
	access := accounting.Access{RequestID: accounting.NewRequestID(), Caller: caller, Purpose: purpose, Person: q.Person}
	w.Header().Set("X-Request-Id", access.RequestID)
	if err := cfg.Record(r.Context(), access); err != nil {
		w.Header().Set("Retry-After", "5")
		outcome(w, http.StatusServiceUnavailable, "transient", "the search could not be recorded; nothing is disclosed")
		return
	}
	nextURL := ""
	if next != "" {
		v := r.URL.Query()
		v.Set("_cursor", next)
		nextURL = (&url.URL{Path: r.URL.Path, RawQuery: v.Encode()}).String()
	}
	if jsonl {
		writeJSONL(w, recs, nextURL)
		return
	}
	b := FHIRBundle(recs, cfg.Now())
	if next != "" || q.After != "" {
		b.Total = nil // a page: the number of all matches is not counted
	}
	b.Link = []BundleLink{{Relation: "self", URL: r.URL.RequestURI()}}
	if nextURL != "" {
		b.Link = append(b.Link, BundleLink{Relation: "next", URL: nextURL})
	}
	w.Header().Set("Content-Type", "application/fhir+json")
	_ = json.NewEncoder(w).Encode(b)
}

// writeJSONL writes recs one a line, and the next page in a Link header.
func writeJSONL(w http.ResponseWriter, recs []ledger.Record, next string) {
	w.Header().Set("Content-Type", "application/jsonl")
	if next != "" {
		w.Header().Set("Link", "<"+next+`>; rel="next"`)
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range recs {
		if enc.Encode(&recs[i]) != nil {
			return
		}
	}
	_ = bw.Flush()
}

// parseSearch returns the Query of a search's parameters, and whether it
// asks for JSON lines.
func parseSearch(v url.Values) (accounting.Query, bool, error) {
	var q accounting.Query
	for k := range v {
		switch k {
		case "entity", "date", "_count", "_cursor", "_format":
		default:
			return q, false, fmt.Errorf("%s: not a search parameter of this service (entity, date, _count, _cursor, _format)", k)
		}
	}
	entity := accounting.NormalPersonID(strings.TrimPrefix(v.Get("entity"), "Patient/"))
	if !accounting.IsPersonID(entity) || len(v["entity"]) != 1 {
		return q, false, errors.New("entity: one person id (a UUID, or Patient/<UUID>) is required")
	}
	q.Person, q.After = entity, v.Get("_cursor")
	for _, d := range v["date"] {
		if err := bound(&q, d); err != nil {
			return q, false, err
		}
	}
	if c := v.Get("_count"); c != "" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 || n > maxCount {
			return q, false, fmt.Errorf("_count %q: want 1 to %d", c, maxCount)
		}
		q.Limit = n
	}
	switch f := v.Get("_format"); f {
	case "", "json", "application/fhir+json":
		return q, false, nil
	case "jsonl":
		return q, true, nil
	default:
		return q, false, fmt.Errorf("_format %q: want json or jsonl", f)
	}
}

// bound sets q's time bound of a date parameter (ge, gt, le, lt; no
// prefix: eq, the whole day of a date).
func bound(q *accounting.Query, d string) error {
	prefix, value := "eq", d
	if len(d) > 2 {
		switch d[:2] {
		case "ge", "gt", "le", "lt", "eq":
			prefix, value = d[:2], d[2:]
		}
	}
	t, day, err := parseTime(value)
	if err != nil {
		return fmt.Errorf("date %q: want [ge|gt|le|lt|eq] and an RFC 3339 time or a date YYYY-MM-DD", d)
	}
	end := t // the last instant value covers
	if day {
		end = t.Add(24*time.Hour - time.Nanosecond)
	}
	switch prefix {
	case "ge":
		q.Since = t
	case "gt":
		q.Since = end.Add(time.Nanosecond)
	case "le":
		q.Until = end
	case "lt":
		q.Until = t.Add(-time.Nanosecond)
	case "eq":
		q.Since, q.Until = t, end
	}
	return nil
}

// parseTime parses an RFC 3339 time or a date (day true).
func parseTime(s string) (t time.Time, day bool, err error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, false, nil
	}
	t, err = time.Parse(time.DateOnly, s)
	return t, true, err
}

// outcome writes a FHIR OperationOutcome with one issue.
func outcome(w http.ResponseWriter, status int, code, diagnostics string) {
	w.Header().Set("Content-Type", "application/fhir+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"resourceType": "OperationOutcome",
		"issue":        []map[string]string{{"severity": "error", "code": code, "diagnostics": diagnostics}},
	})
}
