package query

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lookup/persons/events"
)

func TestNewServerRequiresReaderAndTokens(t *testing.T) {
	tokens := testVerifier(t, testJWKS(t), "")
	tests := []struct {
		name string
		cfg  Config
		want error
	}{
		{"no reader", Config{Tokens: tokens}, ErrNoReader},
		{"no tokens", Config{Reader: fixtureReader()}, ErrNoTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewServer(tc.cfg)
			if !errors.Is(err, tc.want) || s != nil {
				t.Errorf("NewServer = %v, %v; want nil, %v", s, err, tc.want)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	read := rsaToken(t, goodClaims("read:persons"))
	person := "/api/v1/persons/" + consumerA
	tests := []struct {
		name     string
		target   string
		ids      []string // X-Request-Id header values sent
		wantEcho bool     // the sent id is echoed
		wantBad  string   // reason of a 400; "" for none
	}{
		{name: "echoed", target: person, ids: []string{"abc-123"}, wantEcho: true},
		{name: "uuid echoed", target: person, ids: []string{"6f1c7a52-8b0e-4c1e-9d7a-0b4c1f6a9e21"}, wantEcho: true},
		{name: "128 characters", target: person, ids: []string{strings.Repeat("a", 128)}, wantEcho: true},
		{name: "all visible ASCII", target: person, ids: []string{"!~\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}"}, wantEcho: true},
		{name: "absent: generated", target: person},
		{name: "empty: generated", target: person, ids: []string{""}},
		{name: "129 characters", target: person, ids: []string{strings.Repeat("a", 129)}, wantBad: "must be at most 128 characters"},
		{name: "space", target: person, ids: []string{"a b"}, wantBad: "must hold only visible ASCII characters"},
		{name: "tab", target: person, ids: []string{"a\tb"}, wantBad: "must hold only visible ASCII characters"},
		{name: "DEL", target: person, ids: []string{"a\x7fb"}, wantBad: "must hold only visible ASCII characters"},
		{name: "non-ASCII", target: person, ids: []string{"caf\u00e9"}, wantBad: "must hold only visible ASCII characters"},
		{name: "twice", target: person, ids: []string{"a", "b"}, wantBad: "must be given at most once"},
		{name: "on the OpenAPI document", target: "/openapi.yaml", ids: []string{"a b"}, wantBad: "must hold only visible ASCII characters"},
		{name: "on the signers", target: "/api/v1/authorized-signers?consumer_id=" + consumerA, ids: []string{strings.Repeat("a", 129)}, wantBad: "must be at most 128 characters"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(http.MethodGet, tc.target, read)
			for _, id := range tc.ids {
				req.Header.Add("X-Request-Id", id)
			}
			rec := serve(t, s, req)
			checkCommonHeaders(t, rec.Result())
			got := rec.Header().Get("X-Request-Id")
			if tc.wantEcho {
				if got != tc.ids[0] {
					t.Errorf("X-Request-Id = %q, want %q", got, tc.ids[0])
				}
			} else if _, err := uuid.Parse(got); err != nil {
				t.Errorf("X-Request-Id = %q, want a generated UUID", got)
			}
			if tc.wantBad != "" {
				checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probInvalidParams,
					params: []invalidParam{{Name: "X-Request-Id", Reason: tc.wantBad}}})
				return
			}
			if rec.Code != http.StatusOK {
				t.Errorf("status = %d, want 200", rec.Code)
			}
		})
	}
}

func TestGeneratedRequestIDsDiffer(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		rec := serve(t, s, newRequest(http.MethodGet, "/openapi.yaml", ""))
		id := rec.Header().Get("X-Request-Id")
		if seen[id] {
			t.Fatalf("X-Request-Id %q generated twice", id)
		}
		seen[id] = true
	}
}

func TestRouting(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	tests := []struct {
		name   string
		method string
		target string
		kind   problemKind
	}{
		{"root", http.MethodGet, "/", probRouteNotFound},
		{"prefix only", http.MethodGet, "/api/v1", probRouteNotFound},
		{"other version", http.MethodGet, "/api/v2/persons/" + consumerA, probRouteNotFound},
		{"path case matters", http.MethodGet, "/API/v1/persons/" + consumerA, probRouteNotFound},
		{"signers with trailing slash", http.MethodGet, "/api/v1/authorized-signers/", probRouteNotFound},
		{"unknown path with other method", http.MethodPost, "/nowhere", probRouteNotFound},
		{"POST signers", http.MethodPost, "/api/v1/authorized-signers?consumer_id=" + consumerA, probMethodNotAllowed},
		{"PUT person", http.MethodPut, "/api/v1/persons/" + consumerA, probMethodNotAllowed},
		{"DELETE person", http.MethodDelete, "/api/v1/persons/" + consumerA, probMethodNotAllowed},
		{"PATCH person", http.MethodPatch, "/api/v1/persons/" + consumerA, probMethodNotAllowed},
		{"OPTIONS signers", http.MethodOptions, "/api/v1/authorized-signers", probMethodNotAllowed},
		{"POST openapi", http.MethodPost, "/openapi.yaml", probMethodNotAllowed},
		{"custom method", "BREW", "/api/v1/persons/" + consumerA, probMethodNotAllowed},
		{"PROPFIND on a route", "PROPFIND", "/api/v1/authorized-signers", probMethodNotAllowed},
		{"custom method on an unknown path", "FOO1", "/nope", probRouteNotFound},
		{"PROPFIND on an unknown path", "PROPFIND", "/nope", probRouteNotFound},
		{"custom method under a route's prefix", "BREW", "/api/v1/persons/", probRouteNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// No token, a bad X-Request-Id, no JSON accepted: routing
			// answers before authentication and every parameter.
			req := newRequest(tc.method, tc.target, "")
			req.Header.Set("X-Request-Id", "a b")
			req.Header.Set("Accept", "text/html")
			rec := serve(t, s, req)
			if _, err := uuid.Parse(rec.Header().Get("X-Request-Id")); err != nil {
				t.Errorf("X-Request-Id = %q, want a generated UUID", rec.Header().Get("X-Request-Id"))
			}
			checkCommonHeaders(t, rec.Result())
			checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: tc.kind})
			allow := rec.Header().Get("Allow")
			if tc.kind == probMethodNotAllowed && allow != "GET, HEAD" {
				t.Errorf("Allow = %q, want %q", allow, "GET, HEAD")
			}
			if tc.kind != probMethodNotAllowed && allow != "" {
				t.Errorf("Allow = %q on a %d", allow, rec.Code)
			}
		})
	}
}

func TestAcceptNegotiation(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	read := rsaToken(t, goodClaims("read:persons"))
	tests := []struct {
		name   string
		accept []string // Accept header values; nil = none
		token  string
		want   int
	}{
		{"absent", nil, read, 200},
		{"application/json", []string{"application/json"}, read, 200},
		{"upper case", []string{"APPLICATION/JSON"}, read, 200},
		{"with charset", []string{"application/json; charset=utf-8"}, read, 200},
		{"application/*", []string{"application/*"}, read, 200},
		{"*/*", []string{"*/*"}, read, 200},
		{"browser-like", []string{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}, read, 200},
		{"json at low q", []string{"text/html, application/json;q=0.1"}, read, 200},
		{"two headers", []string{"text/html", "application/json"}, read, 200},
		{"empty value means anything", []string{""}, read, 200},
		{"empty list means anything", []string{" , ,"}, read, 200},
		{"text/html", []string{"text/html"}, read, 406},
		{"xml only", []string{"application/xml"}, read, 406},
		{"problem+json only", []string{"application/problem+json"}, read, 406},
		{"json refused", []string{"application/json;q=0"}, read, 406},
		{"json refused, anything else welcome", []string{"application/json;q=0, */*"}, read, 406},
		{"all refused", []string{"*/*;q=0"}, read, 406},
		{"bad q ignored", []string{"application/json;q=2"}, read, 406},
		{"NaN q ignored", []string{"application/json;q=NaN"}, read, 406},
		{"garbage", []string{";;;,,,"}, read, 406},
		{"authentication before 406", []string{"text/html"}, "", 401},
		{"scope before 406", []string{"text/html"}, rsaToken(t, goodClaims("openid")), 403},
	}
	targets := []string{"/api/v1/persons/" + consumerA, "/api/v1/authorized-signers?consumer_id=" + consumerA}
	for _, tc := range tests {
		for _, target := range targets {
			t.Run(tc.name+target, func(t *testing.T) {
				req := newRequest(http.MethodGet, target, tc.token)
				for _, a := range tc.accept {
					req.Header.Add("Accept", a)
				}
				rec := serve(t, s, req)
				checkCommonHeaders(t, rec.Result())
				switch tc.want {
				case 406:
					checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probNotAcceptable})
					return
				case 401:
					checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probUnauthorized})
					return
				case 403:
					checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: probInsufficientScope})
					return
				}
				if rec.Code != tc.want {
					t.Errorf("status = %d, want %d", rec.Code, tc.want)
				}
			})
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		t.Run(method, func(t *testing.T) {
			req := newRequest(method, "/openapi.yaml", "")
			req.Header.Set("Accept", "text/html") // not subject to the Accept check
			rec := serve(t, s, req)
			checkCommonHeaders(t, rec.Result())
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200", rec.Code)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/yaml" {
				t.Errorf("Content-Type = %q, want application/yaml", ct)
			}
			wantBody := string(openAPIDoc)
			if method == http.MethodHead {
				wantBody = ""
			}
			if rec.Body.String() != wantBody {
				t.Errorf("body differs from the embedded document (%d bytes, want %d)", rec.Body.Len(), len(wantBody))
			}
		})
	}
}

func TestInstanceIsTheEscapedPath(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	req := newRequest(http.MethodGet, "/api/v1/persons/%20x%2Fy?q=secret", rsaToken(t, goodClaims("read:persons")))
	rec := serve(t, s, req)
	p := decodeProblem(t, rec)
	if p.Instance != "/api/v1/persons/%20x%2Fy" {
		t.Errorf("instance = %q, want %q", p.Instance, "/api/v1/persons/%20x%2Fy")
	}
}

func TestInternalErrorRevealsNothing(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "")
	read := rsaToken(t, goodClaims("read:persons"))
	for _, id := range []string{personBoom, personPanic} {
		rec := serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+id, read))
		if rec.Code != http.StatusInternalServerError {
			t.Fatalf("status = %d, want 500", rec.Code)
		}
		for _, leak := range []string{"badger", "disk", "secret", "exploded", "goroutine", ".go:"} {
			if strings.Contains(rec.Body.String(), leak) {
				t.Errorf("500 body reveals %q: %s", leak, rec.Body)
			}
		}
	}
}

func TestReaderGetsLowerCaseID(t *testing.T) {
	var gotPerson, gotConsumer string
	reader := &fakeReader{
		PersonFunc: func(_ context.Context, id string) (events.Person, error) {
			gotPerson = id
			return events.Person{}, events.ErrNotFound
		},
		SignersFunc: func(_ context.Context, id string) (events.Person, []events.Signer, error) {
			gotConsumer = id
			return events.Person{}, nil, events.ErrNotFound
		},
	}
	s := newTestServer(t, reader, "")
	read := rsaToken(t, goodClaims("read:persons"))
	serve(t, s, newRequest(http.MethodGet, "/api/v1/persons/"+strings.ToUpper(consumerA), read))
	serve(t, s, newRequest(http.MethodGet, "/api/v1/authorized-signers?consumer_id="+strings.ToUpper(consumerB), read))
	if gotPerson != consumerA {
		t.Errorf("Person got id %q, want %q", gotPerson, consumerA)
	}
	if gotConsumer != consumerB {
		t.Errorf("Signers got id %q, want %q", gotConsumer, consumerB)
	}
}

// TestOverRealServer checks HEAD over a real HTTP server: same headers as
// GET, Content-Length included, no body.
func TestOverRealServer(t *testing.T) {
	srv := httptest.NewServer(newTestServer(t, fixtureReader(), ""))
	t.Cleanup(srv.Close)
	read := rsaToken(t, goodClaims("read:persons"))
	for _, path := range []string{
		"/api/v1/persons/" + consumerA,
		"/api/v1/authorized-signers?consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA",
		"/api/v1/persons/" + consumerNo,
	} {
		t.Run(path, func(t *testing.T) {
			do := func(method string) (*http.Response, []byte) {
				req, err := http.NewRequest(method, srv.URL+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer "+read)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				body, err := io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
				return resp, body
			}
			get, getBody := do(http.MethodGet)    //nolint:bodyclose // do closes the body it returns the bytes of
			head, headBody := do(http.MethodHead) //nolint:bodyclose // do closes the body it returns the bytes of
			if len(headBody) != 0 {
				t.Errorf("HEAD body = %q, want none", headBody)
			}
			if head.StatusCode != get.StatusCode {
				t.Errorf("HEAD status %d, GET status %d", head.StatusCode, get.StatusCode)
			}
			if head.ContentLength != int64(len(getBody)) {
				t.Errorf("HEAD Content-Length = %d, want %d", head.ContentLength, len(getBody))
			}
			for _, h := range []string{"Content-Type", "Cache-Control"} {
				if head.Header.Get(h) != get.Header.Get(h) {
					t.Errorf("HEAD %s = %q, GET %q", h, head.Header.Get(h), get.Header.Get(h))
				}
			}
		})
	}
}

// TestOrderOfChecks holds the order of docs/api.md (routing,
// authentication, scope, parameters, readiness, then the resource): each
// request fails several checks, and the first in that order answers.
func TestOrderOfChecks(t *testing.T) {
	s := newTestServer(t, fixtureReader(), "business_ids")
	withTenants := func(scope string) string {
		return rsaToken(t, withClaims(scope, func(c map[string]any) { c["business_ids"] = []string{businessA} }))
	}
	read := withTenants("read:persons")
	noScope := withTenants("openid")
	noTenants := rsaToken(t, goodClaims("read:persons"))
	badID := strings.Repeat("x", 129)
	signers := "/api/v1/authorized-signers?consumer_id="
	tests := []struct {
		name      string
		method    string
		target    string
		token     string
		requestID string
		accept    string
		want      problemKind
	}{
		{"unknown path beats everything", http.MethodGet, "/nowhere?ssn_mode=FULL", "", badID, "text/html", probRouteNotFound},
		{"405 beats everything", http.MethodPost, signers + "nope&ssn_mode=FULL", "", badID, "text/html", probMethodNotAllowed},
		{"no token beats a bad X-Request-Id", http.MethodGet, "/api/v1/persons/" + consumerA, "", badID, "", probUnauthorized},
		{"no token beats Accept", http.MethodGet, "/api/v1/persons/" + consumerA, "", "", "text/html", probUnauthorized},
		{"no token beats parameters", http.MethodGet, "/api/v1/persons/nope?x=1", "", "", "", probUnauthorized},
		{"bad token beats parameters", http.MethodGet, signers + "nope", "a.b.c", "", "", probUnauthorized},
		{"empty token beats parameters", http.MethodGet, signers + "nope", " ", "", "", probUnauthorized},
		{"scope beats a bad X-Request-Id", http.MethodGet, "/api/v1/persons/" + consumerA, noScope, badID, "", probInsufficientScope},
		{"scope beats Accept", http.MethodGet, signers + consumerA, noScope, "", "text/html", probInsufficientScope},
		{"tenancy claim beats parameters", http.MethodGet, signers + "nope", noTenants, badID, "text/html", probForbidden},
		{"FULL scope beats a bad X-Request-Id", http.MethodGet, signers + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", read, badID, "", probInsufficientScope},
		{"FULL scope beats Accept", http.MethodGet, signers + consumerA + "&expand=PROTECTED_PERSONAL_DATA&ssn_mode=FULL", read, "", "text/html", probInsufficientScope},
		{"FULL scope beats a bad consumer_id", http.MethodGet, signers + "nope&ssn_mode=FULL", read, "", "", probInsufficientScope},
		{"X-Request-Id beats Accept", http.MethodGet, signers + consumerA, read, badID, "text/html", probInvalidParams},
		{"Accept beats query parameters", http.MethodGet, signers + "nope", read, "", "text/html", probNotAcceptable},
		{"Accept beats path parameters", http.MethodGet, "/api/v1/persons/nope", read, "", "text/html", probNotAcceptable},
		{"parameters beat the resource", http.MethodGet, "/api/v1/persons/" + consumerB + "?x=1", read, "", "", probInvalidParams},
		{"resource: another tenant's", http.MethodGet, "/api/v1/persons/" + consumerB, read, "", "", probForbidden},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(tc.method, tc.target, "")
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.requestID != "" {
				req.Header.Set("X-Request-Id", tc.requestID)
			}
			if tc.accept != "" {
				req.Header.Set("Accept", tc.accept)
			}
			rec := serve(t, s, req)
			checkCommonHeaders(t, rec.Result())
			p := decodeProblem(t, rec)
			if p.Type != tc.want.TypeURI() {
				t.Fatalf("type = %q (%d), want %q", p.Type, rec.Code, tc.want.TypeURI())
			}
			if id := rec.Header().Get("X-Request-Id"); tc.requestID != "" {
				if _, err := uuid.Parse(id); err != nil {
					t.Errorf("X-Request-Id = %q, want a generated UUID in place of the invalid one", id)
				}
			}
		})
	}
}

// TestReadiness: while Config.Ready reports false, both operations answer
// 503 not-ready with Retry-After, after authentication, scope and
// parameters and before the resource; once ready they answer from it.
func TestReadiness(t *testing.T) {
	var ready atomic.Bool
	var reads atomic.Int64
	fix := fixtureReader()
	reader := &fakeReader{
		PersonFunc: func(ctx context.Context, id string) (events.Person, error) {
			reads.Add(1)
			return fix.PersonFunc(ctx, id)
		},
		SignersFunc: func(ctx context.Context, id string) (events.Person, []events.Signer, error) {
			reads.Add(1)
			return fix.SignersFunc(ctx, id)
		},
	}
	s, err := NewServer(Config{
		Reader: reader, Tokens: testVerifier(t, testJWKS(t), ""),
		Now: func() time.Time { return testNow }, Ready: ready.Load,
	})
	if err != nil {
		t.Fatal(err)
	}
	read := rsaToken(t, goodClaims("read:persons"))
	person := "/api/v1/persons/" + consumerA
	signers := "/api/v1/authorized-signers?consumer_id=" + consumerA + "&expand=PROTECTED_PERSONAL_DATA"
	tests := []struct {
		name   string
		method string
		target string
		token  string
		want   problemKind
	}{
		{"person", http.MethodGet, person, read, probNotReady},
		{"person HEAD", http.MethodHead, person, read, probNotReady},
		{"signers", http.MethodGet, signers, read, probNotReady},
		{"signers HEAD", http.MethodHead, signers, read, probNotReady},
		{"unknown person is not a false 404", http.MethodGet, "/api/v1/persons/" + consumerNo, read, probNotReady},
		{"authentication first", http.MethodGet, person, "", probUnauthorized},
		{"scope first", http.MethodGet, person, rsaToken(t, goodClaims("openid")), probInsufficientScope},
		{"parameters first", http.MethodGet, person + "?x=1", read, probInvalidParams},
		{"OpenAPI document is not gated", http.MethodGet, "/openapi.yaml", "", -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(tc.method, tc.target, tc.token)
			rec := serve(t, s, req)
			checkCommonHeaders(t, rec.Result())
			if tc.want < 0 {
				if rec.Code != http.StatusOK {
					t.Fatalf("status = %d, want 200", rec.Code)
				}
				return
			}
			checkProblem(t, rec, req, rec.Body.Bytes(), wantProblem{kind: tc.want, params: paramsOf(tc.want)})
			retry := rec.Header().Get("Retry-After")
			if tc.want == probNotReady && retry != "5" {
				t.Errorf("Retry-After = %q, want 5", retry)
			}
			if tc.want != probNotReady && retry != "" {
				t.Errorf("Retry-After = %q on a %d", retry, rec.Code)
			}
		})
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("the read model was read %d times before it was ready", n)
	}

	ready.Store(true)
	for _, target := range []string{person, signers} {
		if rec := serve(t, s, newRequest(http.MethodGet, target, read)); rec.Code != http.StatusOK {
			t.Errorf("GET %s once ready: %d, want 200; body %s", target, rec.Code, rec.Body)
		}
	}
}

// paramsOf is the invalid_params TestReadiness expects of kind.
func paramsOf(kind problemKind) []invalidParam {
	if kind == probInvalidParams {
		return []invalidParam{{Name: "x", Reason: reasonUnknown}}
	}
	return nil
}
