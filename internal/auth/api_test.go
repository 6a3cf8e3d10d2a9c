package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	vErrors "github.com/pb33f/libopenapi-validator/errors"
	"github.com/pb33f/libopenapi-validator/helpers"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lookup/persons/events"
	"github.com/lookup/persons/internal/problem"
	"github.com/lookup/persons/internal/testing/testkit"
	"github.com/lookup/persons/query"
)

// Fixed test identities.
const (
	testIssuer   = "https://issuer.test"
	testAudience = "lookup-api"
	testKID      = "rsa-1"
	testECKID    = "ec-1"
	testEdKID    = "ed-1"

	businessA  = "11111111-1111-4111-8111-111111111111"
	businessB  = "22222222-2222-4222-8222-222222222222"
	consumerA  = "aaaaaaaa-0000-4000-8000-000000000001"
	contactA   = "aaaaaaaa-0000-4000-8000-000000000002"
	consumerB  = "bbbbbbbb-0000-4000-8000-000000000001"
	consumerNo = "cccccccc-0000-4000-8000-000000000009"
)

// testNow is the fixed clock of the handler tests.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

// fakeReader is a hand-written Reader whose behaviour is set per test.
type fakeReader struct {
	PersonFunc  func(ctx context.Context, id string) (events.Person, error)
	SignersFunc func(ctx context.Context, consumerID string) (events.Person, []events.Signer, error)
}

var _ query.Reader = (*fakeReader)(nil)

func (f *fakeReader) Person(ctx context.Context, id string) (events.Person, error) {
	return f.PersonFunc(ctx, id)
}

func (f *fakeReader) Signers(ctx context.Context, consumerID string) (events.Person, []events.Signer, error) {
	return f.SignersFunc(ctx, consumerID)
}

// keys used to sign test tokens, generated once.
var (
	keysOnce sync.Once
	rsaKey   *rsa.PrivateKey
	rsaKey2  *rsa.PrivateKey
	ecKey    *ecdsa.PrivateKey
	edKey    ed25519.PrivateKey
)

// testKeys sets the keys of the tests, testkit's (made once a binary).
func testKeys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		k := testkit.TestJWSKeys()
		rsaKey, rsaKey2, ecKey, edKey = k.RSA, k.RSA2, k.EC, k.Ed
	})
}

func publicJWK(t testing.TB, key any, kid, alg string) map[string]any {
	t.Helper()
	return testkit.PublicJWK(t, key, kid, alg)
}

func jwkObject(t testing.TB, key any, public bool) map[string]any {
	t.Helper()
	return testkit.JWKObject(t, key, public)
}

func jwksJSON(t testing.TB, keys ...map[string]any) []byte {
	t.Helper()
	return testkit.JWKSJSON(t, keys...)
}

// privateJWK returns the JWK of key, private half included, with kid.
func privateJWK(t testing.TB, key any, kid string) map[string]any {
	t.Helper()
	m := jwkObject(t, key, false)
	m["kid"] = kid
	return m
}

// testJWKS returns the standard key set: the RSA key (alg RS256), the EC
// key and the Ed25519 key (both without alg).
func testJWKS(t testing.TB) *JWKS {
	t.Helper()
	testKeys(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	doc := jwksJSON(t,
		publicJWK(t, rsaKey, testKID, "RS256"),
		publicJWK(t, ecKey, testECKID, ""),
		publicJWK(t, edKey, testEdKID, ""),
	)
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := LoadJWKSFile(path)
	if err != nil {
		t.Fatalf("LoadJWKSFile: %v", err)
	}
	return keys
}

func b64(b []byte) string { return testkit.B64(b) }

// signToken builds a compact JWS with header and claims, signed by alg
// with key (alg "none" gives an empty signature): testkit.SignToken.
func signToken(t testing.TB, header, claims map[string]any, alg string, key any) string {
	t.Helper()
	return testkit.SignToken(t, header, claims, alg, key)
}

// goodClaims returns valid claims for the standard issuer and audience,
// with scope.
func goodClaims(scope string) map[string]any {
	return map[string]any{
		"iss":   testIssuer,
		"aud":   testAudience,
		"sub":   "client-42",
		"iat":   testNow.Add(-time.Minute).Unix(),
		"nbf":   testNow.Add(-time.Minute).Unix(),
		"exp":   testNow.Add(time.Hour).Unix(),
		"scope": scope,
	}
}

// rsaToken returns an RS256 token over claims with the standard kid.
func rsaToken(t testing.TB, claims map[string]any) string {
	t.Helper()
	testKeys(t)
	return signToken(t, map[string]any{"alg": "RS256", "typ": "JWT", "kid": testKID}, claims, "RS256", rsaKey)
}

// Server is the API (query) verifying tokens with this package's
// Verifier; verifier is that Verifier's, for the tests of the cache.
type Server struct {
	*query.Server
	verifier *tokenVerifier
}

// apiConfig configures the API of a test: the Verifier's Config and the
// read model.
type apiConfig struct {
	Reader         query.Reader
	Keys           *JWKS
	Issuer         string
	Audience       string
	TenantClaim    string
	Clients        []string
	ScopeClaims    []string
	Registerer     prometheus.Registerer
	Logger         *slog.Logger
	Now            func() time.Time
	TokenCacheSize int
}

// NewServer returns the API of cfg, as cmd/lookupd wires it.
func NewServer(cfg apiConfig) (*Server, error) {
	v, err := NewVerifier(Config{Keys: cfg.Keys, Issuer: cfg.Issuer, Audience: cfg.Audience, TenantClaim: cfg.TenantClaim,
		Clients: cfg.Clients, ScopeClaims: cfg.ScopeClaims, TokenCacheSize: cfg.TokenCacheSize, Registerer: cfg.Registerer, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	s, err := query.NewServer(query.Config{Reader: cfg.Reader, Tokens: v, Registerer: cfg.Registerer, Logger: cfg.Logger, Now: cfg.Now})
	if err != nil {
		return nil, err
	}
	return &Server{Server: s, verifier: v.v}, nil
}

// newTestServer returns a Server over reader with the standard keys,
// issuer, audience and clock; tenantClaim enables tenancy.
func newTestServer(t testing.TB, reader query.Reader, tenantClaim string) *Server {
	t.Helper()
	s, err := NewServer(apiConfig{
		Reader:      reader,
		Keys:        testJWKS(t),
		Issuer:      testIssuer,
		Audience:    testAudience,
		TenantClaim: tenantClaim,
		Now:         func() time.Time { return testNow },
	})
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	return s
}

// serve runs req through h, validates the exchange against openapi.yaml
// and returns the recorded response.
func serve(t *testing.T, h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	validateExchange(t, req, rec)
	return rec
}

// newRequest builds a request with an optional bearer token.
func newRequest(method, target, token string) *http.Request { //nolint:unparam // the token tests call it as the API's tests do
	req := httptest.NewRequest(method, target, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// decodeProblem decodes a problem body.
func decodeProblem(t *testing.T, rec *httptest.ResponseRecorder) problemBody {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json", ct)
	}
	var p problemBody
	dec := json.NewDecoder(strings.NewReader(rec.Body.String()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode problem %q: %v", rec.Body.String(), err)
	}
	return p
}

// The API's problem kinds that only the API answers, for the tests that
// check its answers to tokens.
const (
	probForbidden     = problem.Forbidden
	probNotFound      = problem.NotFound
	probInvalidParams = problem.InvalidParams
)

// problemBody is an RFC 9457 problem details body, as the tests decode it.
type problemBody struct {
	Type          string         `json:"type"`
	Title         string         `json:"title"`
	Status        int            `json:"status"`
	Detail        string         `json:"detail"`
	Instance      string         `json:"instance"`
	InvalidParams []invalidParam `json:"invalid_params,omitempty"`
}

// invalidParam is a member of invalid_params.
type invalidParam struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Ids with special behaviour in the fixture reader.
const (
	personBoom   = "eeeeeeee-0000-4000-8000-00000000000e" // reader error
	personPanic  = "ffffffff-0000-4000-8000-00000000000f" // reader panics
	consumerNone = "dddddddd-0000-4000-8000-00000000000d" // consumer without signers (empty, nil error)
	// consumerBNone is a consumer of business B without signers.
	consumerBNone = "bbbbbbbb-0000-4000-8000-00000000000d"
)

// fixtureSigners are the signers of consumerA, deliberately unsorted.
func fixtureSigners() []events.Signer {
	return []events.Signer{
		{SignerID: "00000000-0000-4000-8000-000000000002", ConsumerID: consumerA, FirstName: "Bob", LastName: "Brown",
			HIPAAAuthorized: false, AccountAccess: events.AccountAccessNone, Status: events.SignerStatusInactive, Type: events.SignerTypeParent},
		{SignerID: "00000000-0000-4000-8000-000000000005", ConsumerID: consumerA, FirstName: "Cy", LastName: "Carter",
			HIPAAAuthorized: true, AccountAccess: events.AccountAccessUnspecified, Status: events.SignerStatusArchived, Type: events.SignerTypeConservator,
			Address:     &events.Address{Line1: "5 Elm St", City: "Austin", State: "TX", ZipCode: "73301", Country: "US"},
			Phone:       &events.Phone{CountryCode: "+1", AreaCode: "512", Number: "5550100"},
			DateOfBirth: "1990-12-31"},
		{SignerID: "00000000-0000-4000-8000-000000000003", ConsumerID: consumerA, FirstName: "Amy", LastName: "Brown",
			AccountAccess: events.AccountAccessPHI, Status: events.SignerStatusPending, Type: events.SignerTypeGuardian, SSN: "987654321"},
		{SignerID: "00000000-0000-4000-8000-000000000001", ConsumerID: consumerA, FirstName: "Zed", MiddleName: "Q", LastName: "Adams",
			HIPAAAuthorized: true, AccountAccess: events.AccountAccessPHIAndAccountUpdates, Status: events.SignerStatusActive, Type: events.SignerTypePowerOfAttorney,
			Address: &events.Address{Line1: "1 Main St", Line2: "Apt 2", City: "Springfield", State: "IL", ZipCode: "62701", Country: "US"},
			Phone:   &events.Phone{CountryCode: "+1", AreaCode: "217", Number: "5550199", Extension: "12"},
			SSN:     "123456789", DateOfBirth: "1980-01-02"},
		{SignerID: "00000000-0000-4000-8000-000000000000", ConsumerID: consumerA, FirstName: "Amy", LastName: "Brown",
			AccountAccess: events.AccountAccessNone, Status: events.SignerStatusActive, Type: events.SignerTypeAuthorizedSigner, SSN: "111223333"},
	}
}

// fixtureReader serves consumerA (business A, five signers), contactA (a
// business contact of business A), consumerB (business B, one signer),
// and the special ids above.
func fixtureReader() *fakeReader {
	return &fakeReader{
		PersonFunc: func(_ context.Context, id string) (events.Person, error) {
			switch id {
			case consumerA:
				return events.Person{ID: consumerA, BusinessID: businessA, FirstName: "Ann", LastName: "Lee", Type: events.PersonTypeConsumer}, nil
			case contactA:
				return events.Person{ID: contactA, BusinessID: businessA, FirstName: "Carl", MiddleName: "J", LastName: "Ito", Type: events.PersonTypeBusinessContact}, nil
			case consumerB:
				return events.Person{ID: consumerB, BusinessID: businessB, FirstName: "Ben", LastName: "Ode", Type: events.PersonTypeConsumer}, nil
			case personBoom:
				return events.Person{}, errors.New("badger: disk on fire at /var/lib/secret")
			case personPanic:
				panic("reader exploded")
			}
			return events.Person{}, events.ErrNotFound
		},
		SignersFunc: func(_ context.Context, id string) (events.Person, []events.Signer, error) {
			switch id {
			case consumerA:
				return events.Person{ID: consumerA, BusinessID: businessA, FirstName: "Ann", LastName: "Lee", Type: events.PersonTypeConsumer}, fixtureSigners(), nil
			case consumerB:
				return events.Person{ID: consumerB, BusinessID: businessB, FirstName: "Ben", LastName: "Ode", Type: events.PersonTypeConsumer},
					[]events.Signer{{SignerID: "00000000-0000-4000-8000-0000000000b1", ConsumerID: consumerB, FirstName: "Bo", LastName: "Bee",
						AccountAccess: events.AccountAccessNone, Status: events.SignerStatusActive, Type: events.SignerTypeParent}}, nil
			case consumerNone:
				return events.Person{ID: consumerNone, BusinessID: businessA, Type: events.PersonTypeConsumer}, nil, nil
			case consumerBNone:
				return events.Person{ID: consumerBNone, BusinessID: businessB, Type: events.PersonTypeConsumer}, []events.Signer{}, nil
			case personBoom:
				return events.Person{}, nil, errors.New("badger: disk on fire")
			case personPanic:
				panic("reader exploded")
			}
			return events.Person{}, nil, events.ErrNotFound
		},
	}
}

var (
	oaOnce      sync.Once
	oaValidator validator.Validator
	oaErr       []error
)

// openAPIValidator returns the validator of the embedded document.
func openAPIValidator(t *testing.T) validator.Validator {
	t.Helper()
	oaOnce.Do(func() {
		doc, err := libopenapi.NewDocument(query.OpenAPI())
		if err != nil {
			oaErr = []error{err}
			return
		}
		oaValidator, oaErr = validator.NewValidator(doc)
	})
	if len(oaErr) > 0 {
		t.Fatalf("openapi.yaml: %v", oaErr)
	}
	return oaValidator
}

// validateExchange fails t if the response rec to req does not match
// openapi.yaml: status, headers and body.
func validateExchange(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	v := openAPIValidator(t)
	resp := rec.Result()
	// The validator reads the request URL and method only.
	vreq := req.Clone(req.Context())
	ok, errs := v.ValidateHttpResponse(vreq, resp)
	if !ok && onlyPathErrors(errs) && (rec.Code == 404 || rec.Code == 405) {
		// The document cannot describe paths and methods that do not
		// exist. Their answers (404 and 405, which come before every other
		// check) are checked as the same status of
		// GET /api/v1/persons/{person_id}, whose responses document them:
		// ProblemDetails body and the required headers.
		vreq = httptest.NewRequest(http.MethodGet, "/api/v1/persons/"+consumerA, nil)
		ok, errs = v.ValidateHttpResponse(vreq, rec.Result())
	}
	if !ok {
		var b strings.Builder
		for _, e := range errs {
			b.WriteString("\n  " + e.Message + ": " + e.Reason)
			for _, se := range e.SchemaValidationErrors {
				b.WriteString("\n    " + se.Reason + " at " + se.FieldPath)
			}
		}
		t.Errorf("%s %s -> %d: response does not match openapi.yaml:%s\nbody: %s", req.Method, req.URL, rec.Code, b.String(), rec.Body.String())
	}
}

// onlyPathErrors reports whether every error says the path or method is
// not in the document.
func onlyPathErrors(errs []*vErrors.ValidationError) bool {
	for _, e := range errs {
		if e.ValidationType != helpers.PathValidation {
			return false
		}
	}
	return len(errs) > 0
}

func checkCommonHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	if got := resp.Header.Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	if got := resp.Header.Get("X-Request-Id"); got == "" {
		t.Errorf("X-Request-Id missing")
	}
	if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
	}
}

// wantProblem is the expected problem of an error answer.
type wantProblem struct {
	kind   problemKind
	params []invalidParam
}

// checkProblem verifies a problem answer field by field.
func checkProblem(t *testing.T, rec interface {
	Result() *http.Response
}, req *http.Request, body []byte, want wantProblem) {
	t.Helper()
	pk := problemKinds[want.kind]
	resp := rec.Result()
	defer resp.Body.Close()
	if resp.StatusCode != pk.Status {
		t.Fatalf("status = %d, want %d; body %s", resp.StatusCode, pk.Status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("Content-Type = %q, want application/problem+json", ct)
	}
	if req.Method == http.MethodHead {
		if len(body) != 0 {
			t.Errorf("HEAD answer has a body: %q", body)
		}
		return
	}
	var p problemBody
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		t.Fatalf("decode problem %q: %v", body, err)
	}
	if p.Type != want.kind.TypeURI() {
		t.Errorf("type = %q, want %q", p.Type, want.kind.TypeURI())
	}
	if p.Title != pk.Title {
		t.Errorf("title = %q, want %q", p.Title, pk.Title)
	}
	if p.Status != pk.Status {
		t.Errorf("status member = %d, want %d", p.Status, pk.Status)
	}
	if p.Detail == "" {
		t.Errorf("detail is empty")
	}
	if p.Instance != req.URL.EscapedPath() {
		t.Errorf("instance = %q, want %q", p.Instance, req.URL.EscapedPath())
	}
	if !reflect.DeepEqual(p.InvalidParams, want.params) {
		t.Errorf("invalid_params = %+v, want %+v", p.InvalidParams, want.params)
	}
}
