package query

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/lookup/persons/events"
)

// fuzzServer is a server over the fixture data without the ids that fail
// or panic on purpose.
func fuzzServer(f *testing.F, tenantClaim string) *Server {
	f.Helper()
	fix := fixtureReader()
	reader := &fakeReader{
		PersonFunc: func(ctx context.Context, id string) (events.Person, error) {
			if id == personBoom || id == personPanic {
				return events.Person{}, events.ErrNotFound
			}
			return fix.PersonFunc(ctx, id)
		},
		SignersFunc: func(ctx context.Context, id string) (events.Person, []events.Signer, error) {
			if id == personBoom || id == personPanic {
				return events.Person{}, nil, events.ErrNotFound
			}
			return fix.SignersFunc(ctx, id)
		},
	}
	return newTestServer(f, reader, tenantClaim)
}

// checkFuzzAnswer fails t unless the answer's status is one of allowed
// and the answer keeps the invariants of every response.
func checkFuzzAnswer(t *testing.T, rec *httptest.ResponseRecorder, allowed ...int) {
	t.Helper()
	ok := false
	for _, a := range allowed {
		ok = ok || rec.Code == a
	}
	if !ok {
		t.Fatalf("status %d, want one of %v; body %s", rec.Code, allowed, rec.Body)
	}
	if rec.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("Cache-Control = %q", rec.Header().Get("Cache-Control"))
	}
	if id := rec.Header().Get("X-Request-Id"); id == "" || requestIDReason(id) != "" {
		t.Fatalf("X-Request-Id = %q", id)
	}
	if rec.Code >= 400 {
		var p problemBody
		if err := json.Unmarshal(rec.Body.Bytes(), &p); err != nil {
			t.Fatalf("problem body %q: %v", rec.Body, err)
		}
		if p.Status != rec.Code || !strings.HasPrefix(p.Type, problemBase) {
			t.Fatalf("problem %+v for status %d", p, rec.Code)
		}
		if rec.Header().Get("Content-Type") != "application/problem+json" {
			t.Fatalf("Content-Type = %q", rec.Header().Get("Content-Type"))
		}
	} else if !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("body is not JSON: %q", rec.Body)
	}
}

func FuzzQueryString(f *testing.F) {
	s := fuzzServer(f, "")
	token := rsaToken(f, goodClaims("read:persons"))
	for _, seed := range []string{
		"consumer_id=" + consumerA,
		"consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=MASKED",
		"consumer_id=" + consumerA + "&ssn_mode=FULL",
		"consumer_id=%zz",
		"consumer_id=" + consumerA + ";expand=x",
		"&&&==&",
		"consumer_id=" + consumerA + "&consumer_id=" + consumerB,
		"consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn%5Fmode=%46ULL",
		"consumer_id=%zz&ssn_mode=FULL",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		req := newRequest(http.MethodGet, "/api/v1/authorized-signers", token)
		req.URL.RawQuery = raw
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		checkFuzzAnswer(t, rec, 200, 400, 403, 404)
		vals, _ := url.ParseQuery(raw) // keeps every pair that decodes
		if rec.Code == 403 && !slices.Contains(vals["ssn_mode"], "FULL") {
			t.Fatalf("403 without ssn_mode=FULL: %q", raw)
		}
	})
}

func FuzzPathID(f *testing.F) {
	s := fuzzServer(f, "")
	token := rsaToken(f, goodClaims("read:persons"))
	for _, seed := range []string{consumerA, strings.ToUpper(contactA), consumerNo, "42", "", "a/b", "%2F", "..", strings.Repeat("f", 36),
		strings.ReplaceAll(consumerA, "-", "%2D"), strings.ReplaceAll(consumerA, "-", "%252D"), "%zz"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		const prefix = "/api/v1/persons/"
		check := func(u *url.URL, decoded string) {
			t.Helper()
			req := newRequest(http.MethodGet, "/", token)
			req.URL = u
			req.RequestURI = req.URL.RequestURI()
			rec := httptest.NewRecorder()
			s.ServeHTTP(rec, req)
			checkFuzzAnswer(t, rec, 200, 400, 404)
			if rec.Code == 200 && !strings.EqualFold(decoded, consumerA) && !strings.EqualFold(decoded, contactA) && !strings.EqualFold(decoded, consumerB) {
				t.Fatalf("200 for %s (id %q)", u, decoded)
			}
		}
		// id as the decoded path, and id as the escaped path net/http
		// would parse from a request line (RawPath set when needed).
		check(&url.URL{Path: prefix + id}, id)
		if u, err := url.Parse(prefix + id); err == nil && u.RawQuery == "" && !u.ForceQuery && u.Fragment == "" {
			check(u, strings.TrimPrefix(u.Path, prefix))
		}
	})
}

func FuzzRequestID(f *testing.F) {
	s := fuzzServer(f, "")
	token := rsaToken(f, goodClaims("read:persons"))
	for _, seed := range []string{"abc", "", " ", strings.Repeat("x", 128), strings.Repeat("x", 129), "caf\u00e9", "a\x00b", "\x7f"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		req := newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, token)
		req.Header["X-Request-Id"] = []string{id}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		checkFuzzAnswer(t, rec, 200, 400)
		got := rec.Header().Get("X-Request-Id")
		switch {
		case rec.Code == 200 && id != "" && got != id:
			t.Fatalf("valid id %q echoed as %q", id, got)
		case rec.Code == 200 && id == "":
			if _, err := uuid.Parse(got); err != nil {
				t.Fatalf("generated id %q is not a UUID", got)
			}
		case rec.Code == 400:
			if requestIDReason(id) == "" {
				t.Fatalf("400 for a valid id %q", id)
			}
			if _, err := uuid.Parse(got); err != nil {
				t.Fatalf("invalid id answered with %q, want a generated UUID", got)
			}
		}
	})
}

func FuzzAuthorization(f *testing.F) {
	s := fuzzServer(f, "business_ids")
	valid := rsaToken(f, withClaimsF(goodClaims("read:persons"), []string{businessA}))
	for _, seed := range []string{
		"Bearer " + valid,
		"bearer " + valid,
		"Basic dXNlcjpwYXNz",
		"Bearer",
		"Bearer a.b.c",
		"Bearer " + valid[:len(valid)-3],
		"Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, h string) {
		req := newRequest(http.MethodGet, "/api/v1/persons/"+consumerA, "")
		req.Header["Authorization"] = []string{h}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		checkFuzzAnswer(t, rec, 200, 401, 403)
		if rec.Code == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), `Bearer realm="lookup"`) {
			t.Fatalf("401 without challenge: %q", rec.Header().Get("WWW-Authenticate"))
		}
	})
}

func withClaimsF(c map[string]any, tenants []string) map[string]any {
	c["business_ids"] = tenants
	return c
}
